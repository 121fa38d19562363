/**
 * Generated client scripts (test/src/sequences/scenarios.ts) run back to back against two
 * replicas of every service: no 5xx, no spurious 4xx, reads that reflect the writes, events
 * of a change made right after /register delivered to that queue (issue 16).
 *
 * `npm test` runs a bounded number with a fixed seed; `npm run test:sequences` runs many
 * (ZC_SEQUENCE_RUNS, ZC_SEQUENCE_SEED to replay a failure).
 */
import t from 'tap';
import fc from 'fast-check';
import { startSystem } from '../harness.js';
import { Script, scenarioArbitrary } from '../sequences/scenarios.js';

const runs = Number(process.env.ZC_SEQUENCE_RUNS ?? 40);
const seed = Number(process.env.ZC_SEQUENCE_SEED ?? 16016);

// About a second a script on a loaded two-core machine, with room to spare.
t.setTimeout(120_000 + runs * 3_000);

t.test('generated read-your-writes sequences over two replicas of every service', async (t) => {
  const sys = await startSystem(t, { replicas: { users: 2, subscriptions: 2, messages: 2, drafts: 2, uploads: 2, events: 2, gateway: 2 } });
  let counter = 0;
  let scenarios = 0;
  const script = fc.record({
    steps: fc.array(scenarioArbitrary(), { minLength: 1, maxLength: 3 }),
    gateways: fc.array(fc.nat(1), { minLength: 2, maxLength: 6 }),
  });
  await fc.assert(
    fc.asyncProperty(script, async ({ steps, gateways }) => {
      for (const step of steps) {
        const s = new Script(sys, `${process.pid.toString(36)}${(counter++).toString(36)}`, gateways);
        await step.run(s);
        scenarios++;
      }
    }),
    // Shrinking would rerun scripts against a system the failed run already changed; the
    // transcript in the failure says what happened.
    { numRuns: runs, seed, endOnFailure: true },
  );
  t.ok(scenarios >= runs, `${scenarios} scenarios in ${runs} scripts, none failed`);
});
