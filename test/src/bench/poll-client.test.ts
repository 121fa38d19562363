/**
 * The fan-out scenarios' long-poll client against a local server: answers are read whole
 * however they arrive, the connection is kept between requests, and what it does not
 * understand (a chunked answer, a dropped connection) is an error its caller can retry.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { PollClient } from './poll-client.js';

async function server(t: { teardown(fn: () => unknown): void }, handler: http.RequestListener): Promise<URL> {
  const s = http.createServer(handler);
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => s.close(() => resolve())));
  t.teardown(() => s.closeAllConnections());
  return new URL(`http://127.0.0.1:${(s.address() as AddressInfo).port}`);
}

t.test('reads answers on one kept connection, with their status, body and the header asked for', async (t) => {
  const seen: Array<{ url?: string; auth?: string; host?: string; port: number }> = [];
  const url = await server(t, (req, res) => {
    seen.push({ url: req.url, auth: req.headers.authorization, host: req.headers.host, port: req.socket.remotePort as number });
    const body = JSON.stringify({ result: 'success', msg: 'ünïcode ✓', n: seen.length });
    res.writeHead(seen.length === 2 ? 400 : 200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'X-Zc-Trace': '1,2,3' });
    // The head and the body in separate writes, the body cut inside a multi-byte character.
    res.flushHeaders();
    const bytes = Buffer.from(body);
    res.write(bytes.subarray(0, 22));
    setTimeout(() => res.end(bytes.subarray(22)), 5);
  });
  const c = new PollClient(url, { authorization: 'Basic abc' }, 'x-zc-trace');
  t.teardown(() => c.close());
  const a = await c.get('/api/v1/events?queue_id=q&last_event_id=-1');
  t.equal(a.status, 200);
  t.same(JSON.parse(a.body), { result: 'success', msg: 'ünïcode ✓', n: 1 });
  t.equal(a.header, '1,2,3');
  const b = await c.get('/api/v1/events?queue_id=q&last_event_id=3');
  t.equal(b.status, 400);
  t.equal(JSON.parse(b.body).n, 2);
  t.equal(seen[1]?.url, '/api/v1/events?queue_id=q&last_event_id=3');
  t.equal(seen[0]?.auth, 'Basic abc');
  t.equal(seen[0]?.host, url.host);
  t.equal(seen[0]?.port, seen[1]?.port, 'the connection was kept');
  await t.rejects(Promise.all([c.get('/a'), c.get('/b')]), /already in flight/, 'one request at a time');
});

t.test('a chunked answer or a dropped connection fails the request; the next one reconnects', async (t) => {
  let n = 0;
  const url = await server(t, (req, res) => {
    n++;
    if (n === 1) {
      // Written in two parts without Content-Length: Node sends it chunked.
      res.write('{"chunked":');
      return void res.end('true}');
    }
    if (n === 2) return void req.socket.destroy();
    res.writeHead(200, { 'content-length': 2, connection: 'close' });
    res.end('{}');
  });
  const c = new PollClient(url, {});
  t.teardown(() => c.close());
  await t.rejects(c.get('/1'), /not understood/);
  await t.rejects(c.get('/2'), /closed|ECONNRESET/);
  const ok = await c.get('/3');
  t.equal(ok.body, '{}', 'a fresh connection after the failures');
  t.equal(ok.header, undefined);
  const again = await c.get('/4').catch((e: Error) => e);
  t.notOk(again instanceof Error && /in flight/.test(again.message), 'an answer that closed the connection leaves the client usable');
});
