/**
 * Bounded work per request (issue 13): narrows that could make an exploding query, multipart
 * bodies beyond the body limit, alert words and subscriptions in bulk. Each is refused with a
 * clear 400 (or 411/413) in the error envelope before the work starts.
 */
import { once } from 'node:events';
import http from 'node:http';
import { connect } from 'node:net';
import t from 'tap';
import { createPool } from '@zc/shared/db';
import { startSystem, type Account } from '../harness.js';

const basic = (a: Account) => `Basic ${Buffer.from(`${a.email}:${a.api_key}`).toString('base64')}`;

/**
 * POSTs a multipart body of `totalBytes` declared (or chunked when `declare` is false), writing
 * it slowly and stopping as soon as the gateway answers: a refusal must come before the body.
 */
/**
 * `multipartPostOnce`, again when the write lost the race with the answer: for a body without a
 * length (411) the gateway answers and closes, and a client still writing can meet EPIPE or
 * ECONNRESET before it has read the answer (seen once in CI on a loaded machine, when declared
 * bodies were refused that way too).
 */
async function multipartPost(url: string, auth: string, o: { totalBytes: number; declare: boolean }): Promise<{ status: number; body: Record<string, unknown>; sent: number }> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await multipartPostOnce(url, auth, o);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (attempt >= 3 || (code !== 'EPIPE' && code !== 'ECONNRESET')) throw err;
    }
  }
}

function multipartPostOnce(url: string, auth: string, o: { totalBytes: number; declare: boolean }): Promise<{ status: number; body: Record<string, unknown>; sent: number }> {
  const boundary = 'zclimit';
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="content"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const req = http.request(url, {
      method: 'POST',
      headers: {
        authorization: auth,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        ...(o.declare ? { 'content-length': String(o.totalBytes) } : { 'transfer-encoding': 'chunked' }),
      },
    });
    req.on('response', (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        // The body was left unfinished: the connection cannot carry another request, and kept
        // open it holds the system's teardown until the server gives up on the rest of the body.
        req.destroy();
        resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>, sent });
      });
    });
    req.on('error', (e) => (answered ? undefined : reject(e)));
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    const pump = () => {
      if (answered || req.destroyed) return;
      if (sent === 0) {
        req.write(head);
        sent += head.length;
      } else if (sent < o.totalBytes) {
        const piece = chunk.subarray(0, Math.min(chunk.length, o.totalBytes - sent));
        req.write(piece);
        sent += piece.length;
      } else {
        req.end();
        return;
      }
      setTimeout(pump, 5);
    };
    pump();
  });
}

t.test('every request does bounded work', async (t) => {
  const sys = await startSystem(t, { only: ['users', 'subscriptions', 'messages', 'gateway'] });
  const { hamlet, iago } = sys.people;
  const h = sys.client(hamlet);

  t.test('a narrow of many or repeated operators is refused before any query', async (t) => {
    const repeated = Array.from({ length: 11 }, (_, i) => ({ operator: 'stream', operand: `nowhere ${i}`, negated: true }));
    const r = await h.get('/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: JSON.stringify(repeated) });
    t.equal(r.status, 400);
    t.same(r.body, { result: 'error', code: 'BAD_REQUEST', msg: 'Invalid narrow operator: operator stream used more than 10 times', desc: 'operator stream used more than 10 times' });
    const many = Array.from({ length: 100 }, (_, i) => ['search', `w${i}`]);
    const m = await h.get('/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: JSON.stringify(many) });
    t.match(m.body, { result: 'error', msg: 'Invalid narrow operator: too many operators (at most 20)' });
    const long = await h.get('/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: JSON.stringify([['search', 'ab '.repeat(400)]]) });
    t.match(long.body, { result: 'error', msg: 'Invalid narrow operator: search terms longer than 1000 characters' });
    const same = await h.get('/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: JSON.stringify(Array.from({ length: 60 }, () => ['streams', 'public'])) });
    t.equal(same.status, 200, 'the same term repeated is merged, not refused');
    const matches = await h.get('/messages/matches_narrow', { msg_ids: JSON.stringify([1]), narrow: JSON.stringify(repeated) });
    t.match(matches.body, { result: 'error', msg: 'Invalid narrow operator: operator stream used more than 10 times' }, 'matches_narrow shares the rule');
  });

  t.test('a multipart body beyond the body limit is refused before it is read', async (t) => {
    const url = `${sys.baseUrl}/api/v1/messages`;
    const twenty = await multipartPost(url, basic(hamlet), { totalBytes: 20 * 1024 * 1024, declare: true });
    t.equal(twenty.status, 413, 'a 20 MB part');
    t.same(twenty.body, { result: 'error', msg: 'Request body too large', code: 'PAYLOAD_TOO_LARGE' });
    t.ok(twenty.sent < 2 * 1024 * 1024, `answered after ${twenty.sent} bytes, not 20 MB`);
    const chunked = await multipartPost(url, basic(hamlet), { totalBytes: 20 * 1024 * 1024, declare: false });
    t.equal(chunked.status, 411, 'a multipart body that declares no length');
    t.same(chunked.body, { result: 'error', msg: 'A multipart body needs a Content-Length', code: 'BAD_REQUEST' });
    const small = await h.post('/messages', { type: 'private', to: JSON.stringify([iago.user_id]), content: 'multipart is fine' }, { encoding: 'multipart' });
    t.equal(small.status, 200, 'a normal multipart request still works');
  });

  t.test('a client that sends its whole body before reading still gets the 413, on a connection it can reuse', async (t) => {
    // As python-zulip-api (requests) does: the answer comes while the body is still being
    // written, and the client reads only once it has written all of it.
    const { hostname, port } = new URL(sys.baseUrl);
    const total = 20 * 1024 * 1024;
    const received: Buffer[] = [];
    const socket = connect({ host: hostname, port: Number(port) });
    await once(socket, 'connect');
    socket.pause();
    const write = (b: Buffer | string) => new Promise<void>((ok, fail) => socket.write(b, (e) => (e ? fail(e) : ok())));
    const boundary = 'zcwhole';
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="content"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`;
    await write(
      `POST /api/v1/messages HTTP/1.1\r\nhost: ${sys.baseUrl.replace(/^https?:\/\//, '')}\r\nauthorization: ${basic(hamlet)}\r\n` +
        `content-type: multipart/form-data; boundary=${boundary}\r\ncontent-length: ${total}\r\n\r\n${head}`,
    );
    const piece = Buffer.alloc(256 * 1024, 0x61);
    for (let sent = head.length; sent < total; sent += piece.length) await write(piece.subarray(0, Math.min(piece.length, total - sent)));
    // The same connection, next request.
    await write(`GET /api/v1/users/me HTTP/1.1\r\nhost: ${sys.baseUrl.replace(/^https?:\/\//, '')}\r\nauthorization: ${basic(hamlet)}\r\n\r\n`);
    socket.on('data', (d: Buffer) => received.push(d));
    socket.resume();
    const deadline = Date.now() + 30_000;
    const answers = () => Buffer.concat(received).toString('utf8').match(/HTTP\/1\.1 \d{3}/g) ?? [];
    while (answers().length < 2 && Date.now() < deadline && !socket.destroyed) await new Promise((r) => setTimeout(r, 20));
    socket.destroy();
    const text = Buffer.concat(received).toString('utf8');
    t.same(answers(), ['HTTP/1.1 413', 'HTTP/1.1 200'], 'the refusal, then the next request answered on the same connection');
    t.match(text, /"code":"PAYLOAD_TOO_LARGE"/);
    t.match(text, new RegExp(`"email":"${hamlet.email.replace(/[.+]/g, '\\$&')}"`));
  });

  t.test('alert words: at most 100 per call and 1000 per user', async (t) => {
    const words = (n: number, p: string) => JSON.stringify(Array.from({ length: n }, (_, i) => `${p}${i}`));
    const tooMany = await h.post('/users/me/alert_words', { alert_words: words(101, 'a') });
    t.equal(tooMany.status, 400);
    t.same(tooMany.body, { result: 'error', code: 'BAD_REQUEST', msg: 'Too many alert words in one request: at most 100.' });
    const removeMany = await h.delete('/users/me/alert_words', { alert_words: words(101, 'a') });
    t.same(removeMany.body, { result: 'error', code: 'BAD_REQUEST', msg: 'Too many alert words in one request: at most 100.' });
    for (let i = 0; i < 10; i++) t.equal((await h.post('/users/me/alert_words', { alert_words: words(100, `w${i}-`) })).status, 200);
    const over = await h.post('/users/me/alert_words', { alert_words: words(1, 'last') });
    t.same(over.body, { result: 'error', code: 'BAD_REQUEST', msg: 'Too many alert words: at most 1000 per user.' });
    const list = await h.get('/users/me/alert_words');
    t.equal((list.body.alert_words as string[]).length, 1000, 'the refused call wrote nothing');
  });

  t.test('alert words: parallel adds cannot pass the per-user cap together', async (t) => {
    const words = (n: number, p: string) => JSON.stringify(Array.from({ length: n }, (_, i) => `${p}${i}`));
    const o = sys.client(sys.people.othello);
    for (let i = 0; i < 9; i++) t.equal((await o.post('/users/me/alert_words', { alert_words: words(100, `s${i}-`) })).status, 200);
    // 900 words, then fifteen calls of 100 at once: one fits.
    const adds = await Promise.all(Array.from({ length: 15 }, (_, i) => o.post('/users/me/alert_words', { alert_words: words(100, `p${i}-`) })));
    t.same(adds.map((r) => r.status).sort(), [...Array<number>(14).fill(400), 200].sort(), 'one call succeeds, the others are refused');
    const list = await o.get('/users/me/alert_words');
    t.equal((list.body.alert_words as string[]).length, 1000, 'the user holds exactly the cap');
  });

  t.test('subscribe and unsubscribe: bounded streams, principals and pairs per call', async (t) => {
    const many = Array.from({ length: 1001 }, (_, i) => ({ name: `s${i}` }));
    const r = await h.post('/users/me/subscriptions', { subscriptions: JSON.stringify(many) });
    t.equal(r.status, 400);
    t.same(r.body, { result: 'error', code: 'BAD_REQUEST', msg: 'Too many streams in one request: at most 1000.' });
    const un = await h.delete('/users/me/subscriptions', { subscriptions: JSON.stringify(many.map((s) => s.name)) });
    t.same(un.body, { result: 'error', code: 'BAD_REQUEST', msg: 'Too many streams in one request: at most 1000.' });
    const principals = JSON.stringify(Array.from({ length: 20 }, () => hamlet.user_id));
    const pairs = await sys.client(iago).post('/users/me/subscriptions', { subscriptions: JSON.stringify(many.slice(0, 501)), principals });
    t.same(pairs.body, { result: 'error', code: 'BAD_REQUEST', msg: 'Too many subscriptions in one request: at most 10000 stream and user pairs.' });
    const fine = await h.post('/users/me/subscriptions', { subscriptions: JSON.stringify([{ name: 'within limits' }]) });
    t.equal(fine.status, 200);
  });
});

t.test('one user has at most so many requests in progress at once; other users are not held up', async (t) => {
  const sys = await startSystem(t, { only: ['users', 'uploads', 'gateway'], gateway: { maxConcurrentPerUser: 2 } });
  const { hamlet, othello } = sys.people;
  // An upload whose body trickles in stays in progress for as long as we keep it open.
  const holdUpload = () => {
    const req = http.request(`${sys.baseUrl}/api/v1/user_uploads`, {
      method: 'POST',
      headers: { authorization: basic(hamlet), 'content-type': 'multipart/form-data; boundary=zchold', 'content-length': '100000' },
    });
    req.on('error', () => undefined);
    req.on('response', (res) => t.fail(`a held upload was answered (${res.statusCode})`));
    req.write('--zchold\r\nContent-Disposition: form-data; name="file"; filename="slow.txt"\r\n\r\nstarted');
    return req;
  };
  const held = [holdUpload(), holdUpload()];
  // Both must be in progress before the third request is made.
  await new Promise((r) => setTimeout(r, 500));
  const h = sys.client(hamlet);
  let refused = await h.get('/users/me/alert_words');
  for (let i = 0; i < 100 && refused.status !== 429; i++) {
    await new Promise((r) => setTimeout(r, 20));
    refused = await h.get('/users/me/alert_words');
  }
  t.equal(refused.status, 429, 'a third request while two are in progress');
  t.match(refused.body, { result: 'error', code: 'RATE_LIMIT_HIT', msg: 'API usage exceeded rate limit', 'retry-after': 1 });
  t.equal((await sys.client(othello).get('/users/me/alert_words')).status, 200, 'another user is served meanwhile');
  for (const r of held) {
    r.removeAllListeners('response');
    r.destroy();
  }
  let after = await h.get('/users/me/alert_words');
  for (let i = 0; i < 100 && after.status !== 200; i++) {
    await new Promise((r) => setTimeout(r, 20));
    after = await h.get('/users/me/alert_words');
  }
  t.equal(after.status, 200, 'once they end (here: the client went away), the slots are free again');
  const parallel = await Promise.all([h.get('/users/me/alert_words'), h.get('/users/me/alert_words')]);
  t.same(parallel.map((r) => r.status), [200, 200], 'two at once are fine');
});


t.test('a read whose client disconnects stops its database work at once (not at its deadline)', async (t) => {
  const sys = await startSystem(t, { only: ['users', 'subscriptions', 'messages', 'gateway'] });
  const { hamlet } = sys.people;
  const db = createPool(sys.env.databaseUrl, { max: 2 });
  t.teardown(() => db.end());
  const waiting = async () =>
    (
      await db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'zc-messages' AND state = 'active' AND wait_event_type = 'Lock'",
      )
    ).rows[0]?.n ?? 0;
  // A narrow made slow on purpose: the message table is locked, so its query waits (as a query
  // over a huge realm would run) until it is cancelled or the lock goes.
  const holder = await db.connect();
  await holder.query('BEGIN');
  await holder.query('LOCK TABLE messages.message IN ACCESS EXCLUSIVE MODE');
  t.teardown(async () => {
    await holder.query('ROLLBACK').catch(() => undefined);
    holder.release();
  });

  const narrow = encodeURIComponent(JSON.stringify([{ operator: 'search', operand: 'anything' }]));
  const req = http.get(`${sys.baseUrl}/api/v1/messages?anchor=newest&num_before=100&num_after=0&narrow=${narrow}`, { headers: { authorization: basic(hamlet) } });
  req.on('error', () => undefined);
  req.on('response', (res) => t.fail(`the locked narrow was answered (${res.statusCode})`));
  let n = 0;
  for (let i = 0; i < 100 && (n = await waiting()) === 0; i++) await new Promise((r) => setTimeout(r, 20));
  t.equal(n, 1, 'the narrow\'s query is running (waiting on the lock)');

  const left = Date.now();
  req.destroy();
  for (let i = 0; i < 100 && (n = await waiting()) > 0; i++) await new Promise((r) => setTimeout(r, 20));
  t.equal(n, 0, 'pg_stat_activity shows it gone');
  const ms = Date.now() - left;
  t.ok(ms < 2000, `cancelled ${ms} ms after the client left (its deadline was 10 s away)`);

  await holder.query('COMMIT');
  const again = await sys.client(hamlet).get('/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: JSON.stringify([{ operator: 'search', operand: 'anything' }]) });
  t.equal(again.status, 200, 'a client who waits is answered');
});
