/** The gateway's settings: the parked poll's heartbeat (it holds GET /events itself). */
import t from 'tap';
import { loadGatewayConfig } from '../src/deps.js';

t.test('a parked poll heartbeats after 45–55 s, or after ZC_HEARTBEAT_MS', async (t) => {
  const delays = Array.from({ length: 50 }, () => loadGatewayConfig({}).heartbeatMs());
  t.ok(delays.every((ms) => ms >= 45_000 && ms < 55_000), 'within Zulip’s window, before a client’s 60 s timeout');
  t.equal(loadGatewayConfig({ ZC_HEARTBEAT_MS: '1234' }).heartbeatMs(), 1234);
  t.throws(() => loadGatewayConfig({ ZC_HEARTBEAT_MS: 'soon' }));
});
