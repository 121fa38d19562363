/** Code playgrounds (Zulip's RealmPlayground, FL 49): administrators add and remove them; everyone gets the list. */
import { eventsInbox, isAdmin, type Actor } from '@zc/shared/contracts';
import { isUniqueViolation, transaction, type Queryable } from '@zc/shared/db';
import { AppError, badRequest } from '@zc/shared/errors';
import { addToOutbox } from '@zc/shared/outbox';
import type { UsersDeps } from '../deps.js';
import { mustBeAdmin } from '../lib/errors.js';
import { checkPlayground } from '../lib/playground-rules.js';
import { playgroundStore, type PlaygroundRow } from '../store/playground-store.js';
import { userStore } from '../store/user-store.js';

export type PlaygroundInput = Omit<PlaygroundRow, 'id'>;

/** The realm's whole list goes to every user's queues as `realm_playgrounds` (Zulip's notify_realm_playgrounds). */
async function announcePlaygrounds(q: Queryable, realmId: number): Promise<void> {
  const playgrounds = await playgroundStore.listForRealm(q, realmId);
  const everyone = (await userStore.listByRealm(q, realmId)).filter((u) => u.is_active).map((u) => u.id);
  await addToOutbox(q, 'users', eventsInbox.notify, { realm_id: realmId, users: everyone, event: { type: 'realm_playgrounds', realm_playgrounds: playgrounds } });
}

function duplicate(e: unknown): never {
  if (isUniqueViolation(e)) {
    const msg = 'Realm playground with this Realm, Pygments language and Name already exists.';
    throw new AppError('BAD_REQUEST', msg, 400, { errors: { __all__: [msg] } });
  }
  throw e;
}

export async function checkAddPlayground(deps: UsersDeps, actor: Actor, input: PlaygroundInput): Promise<number> {
  if (!isAdmin(actor)) throw mustBeAdmin();
  checkPlayground(input);
  return transaction(deps.pool, async (tx) => {
    const id = await playgroundStore.insert(tx, actor.realm_id, input).catch(duplicate);
    await announcePlaygrounds(tx, actor.realm_id);
    return id;
  });
}

export async function checkRemovePlayground(deps: UsersDeps, actor: Actor, id: number): Promise<void> {
  if (!isAdmin(actor)) throw mustBeAdmin();
  await transaction(deps.pool, async (tx) => {
    if (!(await playgroundStore.delete(tx, actor.realm_id, id))) throw badRequest('Invalid playground');
    await announcePlaygrounds(tx, actor.realm_id);
  });
}
