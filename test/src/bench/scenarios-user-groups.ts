/**
 * `messages-send-group-mention`: POST /messages to a stream of 50 subscribers, every message
 * mentioning a group of 10,000 members spread over three levels of subgroups (issue 10: a
 * group mention must not slow sending). Compare its figures with `messages-send`.
 *
 * The group exists only in the messages service's copy of the directory (its members need
 * not be accounts to be expanded), written through SQL and announced to the renderer's
 * cache as the users service announces a group; so the scenario needs the runner's own system.
 * Knobs: `members=N` (default 10000), `subscribers=N` (default 50).
 */
import { Bus } from '@zc/shared/bus';
import { userGroupEvents, type UserGroupRecord } from '@zc/shared/contracts';
import { createPool } from '@zc/shared/db';
import { createLogger } from '@zc/shared/logging';
import { defineScenario, type BenchSystem, type Scenario } from './scenario.js';
import { measureSends, realmIdOf, streamWithSubscribers, type SendState } from './scenarios-messages.js';

const GROUP_NAME = 'bench-crowd';

/** Four nested groups (top ⊃ level 1 ⊃ level 2 ⊃ level 3), `members` ids spread over them. */
function nestedGroups(realmId: number, members: number, firstId: number): UserGroupRecord[] {
  const levels = 4;
  const per = Math.ceil(members / levels);
  return Array.from({ length: levels }, (_, level) => ({
    realm_id: realmId,
    group_id: firstId + level,
    name: level === 0 ? GROUP_NAME : `${GROUP_NAME}-${level}`,
    is_system_group: false,
    members: Array.from({ length: Math.min(per, members - level * per) }, (_, i) => 900_000_000 + level * per + i),
    direct_subgroup_ids: level < levels - 1 ? [firstId + level + 1] : [],
    deleted: false,
  }));
}

async function seedGroups(sys: BenchSystem, members: number): Promise<void> {
  if (!sys.infra) throw new Error('this scenario writes the messages service’s directory copy and needs the runner’s own system');
  const realmId = await realmIdOf(sys);
  const groups = nestedGroups(realmId, members, 1_900_000_000);
  const pool = createPool(sys.infra.databaseUrl, { max: 1 });
  try {
    for (const g of groups) {
      await pool.query('INSERT INTO messages.user_group (id, realm_id, name, is_system_group) VALUES ($1, $2, $3, false) ON CONFLICT (id) DO NOTHING', [g.group_id, realmId, g.name]);
      await pool.query('INSERT INTO messages.user_group_member (group_id, user_id) SELECT $1, unnest($2::bigint[]) ON CONFLICT DO NOTHING', [g.group_id, g.members]);
      await pool.query('INSERT INTO messages.user_group_subgroup (group_id, subgroup_id) SELECT $1, unnest($2::bigint[]) ON CONFLICT DO NOTHING', [g.group_id, g.direct_subgroup_ids]);
    }
  } finally {
    await pool.end();
  }
  // Every messages replica's renderer hears group changes on core NATS, as from the users service.
  const bus = await Bus.connect({ url: sys.infra.natsUrl, prefix: sys.infra.subjectPrefix, name: 'bench-groups', log: createLogger({ service: 'bench', level: 'silent' }) });
  try {
    for (const g of groups) bus.nc.publish(bus.subject(userGroupEvents.changed.subject), JSON.stringify(g));
    await bus.nc.flush();
  } finally {
    await bus.close();
  }
}

const sendGroupMention = defineScenario<SendState>({
  name: 'messages-send-group-mention',
  description: 'POST /messages mentioning a 10,000-member group with three levels of subgroups, to a stream of 50 subscribers',
  needsInProcess: true,
  async setup(sys, options) {
    const state = await streamWithSubscribers(sys, Number(options.extra.subscribers ?? 50));
    await seedGroups(sys, Number(options.extra.members ?? 10_000));
    const probe = await sys.client(state.sender).post('/messages', { type: 'stream', to: String(state.streamId), topic: 'bench', content: `@*${GROUP_NAME}*` });
    if (probe.status !== 200) throw new Error(`probe send failed: ${JSON.stringify(probe.body)}`);
    return state;
  },
  run: (ctx) => measureSends(ctx, { label: 'POST /messages @*group*', what: 'group-mention send', content: (i) => `Hear ye @*${GROUP_NAME}* ${i}` }),
});

export const scenarios: Scenario[] = [sendGroupMention];
