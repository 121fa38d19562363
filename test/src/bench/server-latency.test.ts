/** The gateway's request-duration histogram read back (server-latency.ts), as /metrics prints it. */
import t from 'tap';
import { routeBuckets, serverLatency } from './server-latency.js';

const metrics = (counts: number[]) =>
  [
    '# HELP zc_http_request_duration_seconds HTTP request duration by route template',
    '# TYPE zc_http_request_duration_seconds histogram',
    ...['0.001', '0.0025', '0.005', '0.01', '+Inf'].map(
      (le, i) => `zc_http_request_duration_seconds_bucket{le="${le}",route="/api/v1/realm/presence",method="GET",status_class="2xx"} ${counts[i]}`,
    ),
    // Other routes, methods and status classes are not counted.
    'zc_http_request_duration_seconds_bucket{le="+Inf",route="/api/v1/realm/presence",method="GET",status_class="4xx"} 50',
    'zc_http_request_duration_seconds_bucket{le="+Inf",route="/api/v1/events",method="GET",status_class="2xx"} 70',
    'zc_http_request_duration_seconds_sum{route="/api/v1/realm/presence",method="GET",status_class="2xx"} 1.5',
  ].join('\n');

t.test('buckets of one route, and what was answered between two readings', async (t) => {
  const before = routeBuckets(metrics([0, 10, 20, 20, 20]), '/api/v1/realm/presence', 'GET');
  t.same([...before.entries()], [[0.001, 0], [0.0025, 10], [0.005, 20], [0.01, 20], [Infinity, 20]]);
  t.same(routeBuckets(metrics([1, 1, 1, 1, 1]), '/api/v1/realm/presence', 'POST').size, 0);
  // 1,000 more answers: 900 within 2.5 ms, 995 within 5 ms, all within 10 ms.
  const after = routeBuckets(metrics([0, 910, 1015, 1020, 1020]), '/api/v1/realm/presence', 'GET');
  const s = serverLatency(before, after, 5);
  t.equal(s.count, 1000);
  t.equal(s.p99AtMostMs, 5);
  t.equal(s.shareWithin, 0.995);
  t.equal(serverLatency(before, after, 2.5).shareWithin, 0.9);
  t.same(serverLatency(after, after, 5), { count: 0, p99AtMostMs: Infinity, shareWithin: 0 }, 'nothing answered');
});
