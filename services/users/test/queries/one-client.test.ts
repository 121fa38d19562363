/**
 * Queries on one PostgreSQL client (a transaction, /register's snapshot read) go one after the
 * other: pg queues queries sent together, warns about it from the third, and will stop
 * queueing them in pg 9. The user-group reads once sent them together.
 */
import t from 'tap';
import type { Queryable } from '@zc/shared/db';
import { readWithSnapshot } from '@zc/shared/db';
import { checkCreateUserGroup } from '../../src/actions/user-groups.js';
import { doCreateRealm, doCreateUser } from '../../src/actions/users.js';
import { groupPeople, listUserGroups } from '../../src/queries/user-groups.js';
import { usersTestDb } from '../fixtures/users-db.js';

/** `q` that records how many of its queries were in flight at once. */
function watched(q: Queryable): { q: Queryable; most: () => number } {
  let inFlight = 0;
  let most = 0;
  const inner = q.query.bind(q) as (...a: unknown[]) => Promise<unknown>;
  const query = async (...args: unknown[]) => {
    inFlight++;
    most = Math.max(most, inFlight);
    try {
      return await inner(...args);
    } finally {
      inFlight--;
    }
  };
  return { q: { query } as unknown as Queryable, most: () => most };
}

t.test('user-group reads send one query at a time', async (t) => {
  const { deps, pool } = await usersTestDb(t);
  const { realm, owner } = await doCreateRealm(deps, { name: 'Elsinore', subdomain: '', owner: { email: 'iago@zulip.test', password: 'pw-iago-123', full_name: 'Iago' } });
  const hamlet = await doCreateUser(deps, realm, { email: 'hamlet@zulip.test', password: 'pw-hamlet-1', full_name: 'King Hamlet' });
  const actor = { realm_id: realm.id, user_id: owner.id, role: 100, email: 'iago@zulip.test', full_name: 'Iago', is_bot: false };
  await checkCreateUserGroup(deps, actor, { name: 'Danes', description: 'of Denmark', members: [hamlet.user.id], subgroups: [] });

  await readWithSnapshot(pool, async (client) => {
    const w = watched(client);
    const groups = await listUserGroups(w.q, realm.id);
    t.ok(groups.some((g) => g.name === 'Danes'), 'the groups are read');
    t.equal(w.most(), 1, 'listUserGroups');
    const people = await groupPeople(w.q, realm.id);
    t.ok([...people.users].length >= 2);
    t.equal(w.most(), 1, 'groupPeople');
  });
});
