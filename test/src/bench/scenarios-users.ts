/**
 * The first scenarios: the two cheapest authenticated reads. They measure the gateway's
 * fixed cost per request (Basic auth from the cache, params, one NATS round trip to the
 * users service, the envelope), the floor every other endpoint stands on.
 */
import { basicAuth, type LoadTarget } from './load.js';
import { defineScenario, type BenchAccount, type BenchSystem, type Scenario } from './scenario.js';

/** The account the read scenarios act as: a plain member when there is one. */
function reader(sys: BenchSystem): BenchAccount {
  return sys.people.hamlet ?? sys.admin;
}

function authedGet(name: string, path: string, who: BenchAccount): LoadTarget {
  const headers = { authorization: basicAuth(who), 'user-agent': 'ZulipBench/1.0' };
  return { name, request: () => ({ method: 'GET', path, headers }) };
}

const usersMe = defineScenario({
  name: 'users-me',
  description: 'GET /users/me at stepped fixed rates: highest rate held with p99 under budget',
  default: true,
  async run(ctx) {
    const ramp = await ctx.rampUp(authedGet('GET /users/me', '/api/v1/users/me', reader(ctx.sys)));
    return {
      headlines: [{ label: 'GET /users/me max rate held', value: ramp.maxRateHeld, unit: 'req/s' }],
      steps: ramp.steps,
      details: { stopped_by: ramp.stoppedBy },
    };
  },
});

const usersList = defineScenario({
  name: 'users-list',
  description: 'GET /users (every member of the realm) at stepped fixed rates',
  default: true,
  async run(ctx) {
    const ramp = await ctx.rampUp(authedGet('GET /users', '/api/v1/users', reader(ctx.sys)));
    return {
      headlines: [{ label: 'GET /users max rate held', value: ramp.maxRateHeld, unit: 'req/s' }],
      steps: ramp.steps,
      details: { stopped_by: ramp.stoppedBy },
    };
  },
});

export const scenarios: Scenario[] = [usersMe, usersList];
