/**
 * User groups end to end (spec 4.19, Zulip's user group endpoints at feature level 155):
 * endpoints with their errors and permissions, system groups following roles, the
 * user_group events applied to /register state, and group mentions setting `mentioned`.
 */
import t, { type Test } from 'tap';
import type { ApiClient } from '../client.js';
import { startSystem } from '../harness.js';
import { verifyAction } from './events-verify.js';
import { messagesWorld } from './messages-fixtures.js';

interface Group {
  id: number;
  name: string;
  description: string;
  members: number[];
  direct_subgroup_ids: number[];
  is_system_group: boolean;
}

t.test('user groups', async (t) => {
  const sys = await startSystem(t);
  const { iago, desdemona, hamlet, othello, polonius } = sys.people;
  const [admin, h, o, guest] = [sys.client(desdemona), sys.client(hamlet), sys.client(othello), sys.client(polonius)];
  const groups = async (c: ApiClient = h) => (await c.get('/user_groups')).body.user_groups as Group[];
  const byName = async (name: string) => (await groups()).find((g) => g.name === name) as Group;
  const expectError = (t: Test, r: { status: number; body: Record<string, unknown> }, msg: string) => {
    t.equal(r.status, 400, msg);
    t.match(r.body, { result: 'error', code: 'BAD_REQUEST', msg });
  };

  t.test('system groups exist, nested, with members by role', async (t) => {
    const all = await groups();
    const names = all.filter((g) => g.is_system_group).map((g) => g.name);
    t.same(names, ['role:internet', 'role:everyone', 'role:members', 'role:fullmembers', 'role:moderators', 'role:administrators', 'role:owners', 'role:nobody']);
    const owners = await byName('role:owners');
    const admins = await byName('role:administrators');
    t.same(owners.members, [iago.user_id]);
    t.same(admins.members, [desdemona.user_id]);
    t.same(admins.direct_subgroup_ids, [owners.id]);
    t.ok((await byName('role:members')).members.includes(hamlet.user_id));
    t.same((await byName('role:everyone')).members, [polonius.user_id], 'guests are direct members of role:everyone only');
    const everyone = await h.get(`/user_groups/${(await byName('role:everyone')).id}/members`);
    for (const p of [iago, desdemona, hamlet, othello, polonius]) t.ok((everyone.body.members as number[]).includes(p.user_id), `${p.full_name} is in role:everyone`);
    const check = await h.get(`/user_groups/${admins.id}/members/${iago.user_id}`);
    t.same(check.body.is_user_group_member, true, 'owners are administrators through the subgroup');
    const direct = await h.get(`/user_groups/${admins.id}/members/${iago.user_id}`, { direct_member_only: true });
    t.same(direct.body.is_user_group_member, false);
    const subs = await h.get(`/user_groups/${(await byName('role:moderators')).id}/subgroups`);
    t.same(subs.body.subgroups, [admins.id, owners.id]);
    expectError(t, await admin.patch(`/user_groups/${admins.id}`, { name: 'Admins' }), 'Insufficient permission');
  });

  t.test('create, rename, members, subgroups, delete, with their errors', async (t) => {
    const created = await h.post('/user_groups/create', { name: 'actors', description: 'The players', members: JSON.stringify([hamlet.user_id, othello.user_id]) });
    t.equal(created.status, 200);
    const actors = created.body.group_id as number;
    t.match(await byName('actors'), { id: actors, description: 'The players', members: [hamlet.user_id, othello.user_id], direct_subgroup_ids: [], is_system_group: false });

    expectError(t, await h.post('/user_groups/create', { name: 'actors', description: '', members: '[]' }), "User group 'actors' already exists.");
    expectError(t, await h.post('/user_groups/create', { name: ' ', description: '', members: '[]' }), "User group name can't be empty!");
    expectError(t, await h.post('/user_groups/create', { name: 'x'.repeat(101), description: '', members: '[]' }), 'User group name cannot exceed 100 characters.');
    expectError(t, await h.post('/user_groups/create', { name: 'role:x', description: '', members: '[]' }), "User group name cannot start with 'role:'.");
    expectError(t, await h.post('/user_groups/create', { name: 'ghosts', description: '', members: '[999999]' }), 'Invalid user ID: 999999');
    expectError(t, await guest.post('/user_groups/create', { name: 'guests', description: '', members: '[]' }), 'Insufficient permission');
    const missing = await h.post('/user_groups/create', { name: 'x', members: '[]' });
    t.match(missing.body, { code: 'REQUEST_VARIABLE_MISSING', var_name: 'description' });
    t.notOk((await groups()).some((g) => g.name === 'ghosts' || g.name === 'guests'), 'failed requests created nothing');

    t.equal((await h.patch(`/user_groups/${actors}`, { name: 'players', description: 'On stage' })).status, 200);
    t.match(await byName('players'), { id: actors, description: 'On stage' });
    expectError(t, await h.patch(`/user_groups/${actors}`, {}), 'No new data supplied');
    expectError(t, await h.patch('/user_groups/12345', { name: 'x' }), 'Invalid user group');
    expectError(t, await sys.client(polonius).patch(`/user_groups/${actors}`, { name: 'x' }), 'Insufficient permission');

    const members = (add: number[], del: number[] = [], c = h) => c.post(`/user_groups/${actors}/members`, { add: JSON.stringify(add), delete: JSON.stringify(del) });
    expectError(t, await members([]), 'Nothing to do. Specify at least one of "add" or "delete".');
    expectError(t, await members([hamlet.user_id]), `User ${hamlet.user_id} is already a member of this group`);
    expectError(t, await members([], [iago.user_id]), `There is no member '${iago.user_id}' in this user group`);
    expectError(t, await members([424242]), 'Invalid user ID: 424242');
    t.equal((await members([iago.user_id], [othello.user_id])).status, 200);
    t.same((await byName('players')).members, [iago.user_id, hamlet.user_id].sort((a, b) => a - b));
    expectError(t, await members([othello.user_id], [], o), 'Insufficient permission');
    t.equal((await members([othello.user_id], [], admin)).status, 200, 'administrators manage any group');

    const crew = (await h.post('/user_groups/create', { name: 'crew', description: '', members: JSON.stringify([polonius.user_id]) })).body.group_id as number;
    const subgroups = (group: number, add: number[], del: number[] = []) => h.post(`/user_groups/${group}/subgroups`, { add: JSON.stringify(add), delete: JSON.stringify(del) });
    t.equal((await subgroups(actors, [crew])).status, 200);
    expectError(t, await subgroups(actors, [crew]), `User group ${crew} is already a subgroup of this group.`);
    const crewAdmin = sys.client(polonius);
    expectError(t, await crewAdmin.post(`/user_groups/${crew}/subgroups`, { add: JSON.stringify([actors]) }), 'Insufficient permission');
    t.equal((await admin.post(`/user_groups/${crew}/members`, { add: JSON.stringify([hamlet.user_id]) })).status, 200);
    expectError(t, await subgroups(crew, [actors]), `User group ${crew} is already a subgroup of one of the passed subgroups.`);
    expectError(t, await subgroups(actors, [], [12345]), 'Invalid user group ID: 12345');
    expectError(t, await subgroups(actors, [], [(await byName('role:owners')).id]), `User group ${(await byName('role:owners')).id} is not a subgroup of this group.`);
    t.same((await h.get(`/user_groups/${actors}/subgroups`)).body.subgroups, [crew]);
    const all = (await h.get(`/user_groups/${actors}/members`)).body.members as number[];
    t.ok(all.includes(polonius.user_id), 'members through a subgroup');
    t.notOk(((await h.get(`/user_groups/${actors}/members`, { direct_member_only: true })).body.members as number[]).includes(polonius.user_id));
    expectError(t, await h.get(`/user_groups/${actors}/members/999999`), 'No such user');

    t.equal((await h.delete(`/user_groups/${crew}`)).status, 200);
    t.same((await byName('players')).direct_subgroup_ids, [], 'a deleted group leaves its supergroups');
    expectError(t, await h.delete(`/user_groups/${crew}`), 'Invalid user group');
  });

  t.test('user_group events apply to realm_user_groups', async (t) => {
    const params = { event_types: ['user_group', 'realm_user_groups'] };
    let id = 0;
    const [add] = await verifyAction(t, sys, h, async () => {
      id = (await h.post('/user_groups/create', { name: 'watch', description: 'Night watch', members: JSON.stringify([hamlet.user_id]) })).body.group_id as number;
    }, { params, expect: ['user_group/add'] });
    t.match(add, { group: { id, name: 'watch', members: [hamlet.user_id] } });
    await verifyAction(t, sys, h, () => h.patch(`/user_groups/${id}`, { name: 'guard', description: 'Castle guard' }), { params, expect: ['user_group/update'] });
    await verifyAction(t, sys, h, () => h.post(`/user_groups/${id}/members`, { add: JSON.stringify([othello.user_id]) }), { params, expect: ['user_group/add_members'] });
    await verifyAction(t, sys, h, () => h.post(`/user_groups/${id}/members`, { delete: JSON.stringify([othello.user_id]) }), { params, expect: ['user_group/remove_members'] });
    const other = (await h.post('/user_groups/create', { name: 'sentries', description: '', members: '[]' })).body.group_id as number;
    await verifyAction(t, sys, h, () => h.post(`/user_groups/${id}/subgroups`, { add: JSON.stringify([other]) }), { params, expect: ['user_group/add_subgroups'] });
    await verifyAction(t, sys, h, () => h.post(`/user_groups/${id}/subgroups`, { delete: JSON.stringify([other]) }), { params, expect: ['user_group/remove_subgroups'] });
    await verifyAction(t, sys, h, () => h.delete(`/user_groups/${id}`), { params, expect: ['user_group/remove'] });
  });

  t.test('group mentions render and set mentioned for members through subgroups', async (t) => {
    const w = messagesWorld(sys, t);
    await w.createStream('Elsinore', [iago.user_id, desdemona.user_id, hamlet.user_id, othello.user_id, polonius.user_id]);
    const inner = (await admin.post('/user_groups/create', { name: 'inner', description: '', members: JSON.stringify([othello.user_id]) })).body.group_id as number;
    const court = (await admin.post('/user_groups/create', { name: 'court', description: '', members: JSON.stringify([polonius.user_id]) })).body.group_id as number;
    t.equal((await admin.post(`/user_groups/${court}/subgroups`, { add: JSON.stringify([inner]) })).status, 200);
    const flagsOf = async (c: ApiClient, id: number) =>
      ((await c.get('/messages', { anchor: id, num_before: 0, num_after: 0, narrow: JSON.stringify([['id', String(id)]]) })).body.messages as Array<{ flags: string[]; content: string }>)[0];
    // The messages service learns of groups through its directory copy; wait until it renders the mention.
    let id = 0;
    let m: { flags: string[]; content: string } | undefined;
    for (let i = 0; i < 50; i++) {
      await sys.flushOutboxes();
      id = (await h.post('/messages', { type: 'stream', to: 'Elsinore', topic: 'court', content: 'Hear ye, @*court*!' })).body.id as number;
      m = await flagsOf(h, id);
      if (m?.content.includes('user-group-mention')) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    t.match(m?.content, `<span class="user-group-mention" data-user-group-id="${court}">@court</span>`);
    t.ok((await flagsOf(guest, id))?.flags.includes('mentioned'), 'a direct member is mentioned');
    t.ok((await flagsOf(o, id))?.flags.includes('mentioned'), 'a member through a subgroup is mentioned');
    t.notOk((await flagsOf(sys.client(iago), id))?.flags.includes('mentioned'), 'a non-member is not');
    const silent = (await h.post('/messages', { type: 'stream', to: 'Elsinore', topic: 'court', content: 'quietly @_*court*' })).body.id as number;
    t.notOk((await flagsOf(o, silent))?.flags.includes('mentioned'), 'a silent group mention mentions nobody');
    const edit = (await h.post('/messages', { type: 'stream', to: 'Elsinore', topic: 'court', content: 'nothing yet' })).body.id as number;
    t.notOk((await flagsOf(o, edit))?.flags.includes('mentioned'));
    t.equal((await h.patch(`/messages/${edit}`, { content: 'now @*inner*' })).status, 200);
    t.ok((await flagsOf(o, edit))?.flags.includes('mentioned'), 'an edit adding a group mention sets mentioned');
    t.notOk((await flagsOf(guest, edit))?.flags.includes('mentioned'), 'only the mentioned group’s members');
  });
});
