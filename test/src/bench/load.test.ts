/**
 * The load generator against a local server whose behaviour we control: requests go out on
 * schedule even while the server stalls, the stall shows in the latencies (no coordinated
 * omission), and statuses, Zulip codes and dropped connections are counted apart.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { LatencyHistogram } from './histogram.js';
import { runStep, stepVerdict, Targets, type StepResult } from './load.js';

async function server(t: { teardown(fn: () => unknown): void }, handler: http.RequestListener): Promise<string> {
  const s = http.createServer(handler);
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => s.close(() => resolve())));
  t.teardown(() => s.closeAllConnections());
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

t.test('LatencyHistogram', async (t) => {
  const h = new LatencyHistogram();
  for (let i = 1; i <= 1000; i++) h.record(i / 10); // 0.1 … 100 ms
  const s = h.summary();
  t.equal(s.count, 1000);
  t.ok(Math.abs(s.p50 - 50) < 0.1, `p50 ${s.p50}`);
  t.ok(Math.abs(s.p99 - 99) < 0.1, `p99 ${s.p99}`);
  t.equal(s.max, 100);
  t.ok(s.p999 <= s.max, 'percentiles never exceed the maximum');
  t.same(new LatencyHistogram().summary(), { count: 0, mean: 0, p50: 0, p90: 0, p99: 0, p999: 0, max: 0 });
  t.type(h.encoded(), 'string');
});

t.test('a stalled server: requests keep leaving on schedule, and the wait is measured', async (t) => {
  // Answers nothing between 200 and 500 ms after the first request arrives, then everything at
  // once. Timed from the first arrival, not from the call, so that a busy machine's slow start
  // does not move the stall out of the step.
  let startedAt = 0;
  const held: http.ServerResponse[] = [];
  let releaseTimer: NodeJS.Timeout | undefined;
  const url = await server(t, (_req, res) => {
    if (startedAt === 0) startedAt = Date.now();
    const since = Date.now() - startedAt;
    if (since >= 200 && since < 500) {
      held.push(res);
      releaseTimer ??= setTimeout(() => held.forEach((r) => r.end('{"result":"success"}')), 500 - since);
      return;
    }
    res.end('{"result":"success"}');
  });
  const targets = new Targets([url], 128);
  t.teardown(() => targets.close());
  const s = await runStep(targets, { name: 'stall', request: () => ({ method: 'GET', path: '/' }) }, { rate: 200, durationSeconds: 1 });
  t.equal(s.sent, 200, 'every request was sent, stall or not');
  t.equal(s.completed, 200);
  t.equal(s.errors, 0);
  t.same(s.statuses, { 200: 200 });
  // 60 are due in the 300 ms; a third is enough to show nobody waited, even on a busy machine.
  t.ok(held.length >= 20, `${held.length} requests arrived during the stall, none waited for an answer first`);
  // Requests due at 200 ms waited ~300 ms; a closed loop would have sent one and reported one slow sample.
  t.ok(s.latency.max >= 250, `max ${s.latency.max} ms shows the whole stall`);
  t.ok(s.latency.p90 >= 50, `p90 ${s.latency.p90} ms: the queue behind the stall counts too`);
  t.ok(stepVerdict(s, 50), 'a step with a 300 ms stall is not held under a 50 ms budget');
});

t.test('stepVerdict', async (t) => {
  const lat = (p99: number) => ({ count: 10, mean: 1, p50: 1, p90: 1, p99, p999: p99, max: p99 });
  const step = (o: { p99?: number; lag?: number; errors?: number; completed?: number }) =>
    ({ sent: 10, completed: o.completed ?? 10, errors: o.errors ?? 0, latency: lat(o.p99 ?? 5), sendLag: lat(o.lag ?? 1) }) as StepResult;
  t.equal(stepVerdict(step({}), 50), undefined, 'held');
  t.equal(stepVerdict(step({ p99: 50 }), 50), 'p99', 'the budget is exclusive');
  t.equal(stepVerdict(step({ p99: 80, lag: 60 }), 50), 'behind', 'the generator, not the server, was late');
  t.equal(stepVerdict(step({ errors: 1 }), 50), 'errors');
  t.equal(stepVerdict(step({ completed: 9 }), 50), 'errors', 'an unanswered request is an error');
});

t.test('statuses, Zulip codes and transport failures are counted apart', async (t) => {
  let n = 0;
  const url = await server(t, (req, res) => {
    n++;
    if (n % 10 === 0) {
      res.writeHead(429, { 'content-type': 'application/json' }).end('{"result":"error","msg":"API usage exceeded rate limit","code":"RATE_LIMIT_HIT"}');
    } else if (n % 10 === 5) {
      res.writeHead(500).end('oops');
    } else if (n % 10 === 7) {
      req.socket.destroy();
    } else {
      res.end('{"result":"success","msg":""}');
    }
  });
  const targets = new Targets([url], 4);
  t.teardown(() => targets.close());
  const s: StepResult = await runStep(
    targets,
    { name: 'mixed', request: () => ({ method: 'POST', path: '/x', body: 'a=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } }) },
    { rate: 100, durationSeconds: 1 },
  );
  t.equal(s.sent, 100);
  t.equal(s.statuses['429'], 10);
  t.equal(s.statuses['500'], 10);
  t.equal(s.codes.RATE_LIMIT_HIT, 10, 'error bodies are read for their code');
  t.equal(s.codes['(not json)'], 10);
  const dropped = Object.values(s.transportErrors).reduce((a, b) => a + b, 0);
  t.equal(dropped, 10, `dropped connections: ${JSON.stringify(s.transportErrors)}`);
  t.equal(s.errors, 30);
  t.equal(stepVerdict(s, 1000), 'errors');
});

t.test('checks reject successes that are wrong, and a timeout cuts off the drain', async (t) => {
  const url = await server(t, (req, res) => {
    if (req.url === '/hang') return; // never answers
    res.end(req.url === '/bad' ? '{"result":"success","id":null}' : '{"result":"success","id":1}');
  });
  const targets = new Targets([url], 4);
  t.teardown(() => targets.close());
  const checked = await runStep(
    targets,
    { name: 'check', request: (i) => ({ method: 'GET', path: i % 2 ? '/bad' : '/good' }), check: (_s, body) => (body.includes('"id":1') ? undefined : 'no id') },
    { rate: 50, durationSeconds: 0.4 },
  );
  t.same(checked.checkFailures, { 'no id': 10 });
  t.equal(checked.errors, 10);
  const hung = await runStep(targets, { name: 'hang', request: () => ({ method: 'GET', path: '/hang' }) }, { rate: 20, durationSeconds: 0.2, drainTimeoutMs: 200 });
  t.same(hung.transportErrors, { timeout: 4 });
  t.equal(hung.completed, 0);
  t.equal(stepVerdict(hung, 50), 'errors');
});

t.test('checkEvery: one success in N is checked; every body, large or not, is read to its end on one connection', async (t) => {
  // 200 KB, past undici's dump() limit (128 KiB), which closed the connection of an unread body.
  const big = `{"result":"success","pad":"${'x'.repeat(200_000)}"}`;
  const sockets = new Set<unknown>();
  const url = await server(t, (req, res) => {
    sockets.add(req.socket);
    res.end(req.url === '/bad' ? '{"result":"success","id":null}' : big);
  });
  const targets = new Targets([url], 1);
  t.teardown(() => targets.close());
  const looked: number[] = [];
  const s = await runStep(
    targets,
    {
      name: 'sampled',
      request: (i) => ({ method: 'GET', path: i === 3 ? '/bad' : `/ok${i}` }),
      check: (_s, body) => {
        looked.push(body.length);
        return body.includes('"pad"') ? undefined : 'no pad';
      },
      checkEvery: 3,
    },
    { rate: 50, durationSeconds: 0.2 },
  );
  t.equal(s.completed, 10);
  t.same(looked.length, 4, 'requests 0, 3, 6 and 9 were checked');
  t.same(s.checkFailures, { 'no pad': 1 }, 'a checked answer that is wrong counts');
  t.ok(looked.filter((n) => n === big.length).length === 3, 'checked bodies are whole');
  t.equal(sockets.size, 1, 'unchecked large bodies did not cost their connection');
});
