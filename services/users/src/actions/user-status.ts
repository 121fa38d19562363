/**
 * POST /users/me/status (Zulip's do_update_user_status). Since feature level 148 `away` is a
 * legacy way to set the `presence_enabled` setting (away = !presence_enabled); the presence
 * machinery is told after the commit. Every active member gets a `user_status` event with
 * the fields the request set.
 */
import { eventsInbox, type Actor } from '@zc/shared/contracts';
import { transaction } from '@zc/shared/db';
import { addToOutbox } from '@zc/shared/outbox';
import type { UsersDeps } from '../deps.js';
import { checkStatusRequest, type StatusRequest } from '../lib/user-status.js';
import { userStatusStore } from '../store/user-status-store.js';
import { userStore } from '../store/user-store.js';
import { doPresenceEnabledChanged } from './presence.js';

export async function checkUpdateUserStatus(deps: UsersDeps, actor: Actor, r: StatusRequest): Promise<void> {
  const change = checkStatusRequest(r);
  await transaction(deps.pool, async (tx) => {
    await userStatusStore.update(tx, actor.user_id, change);
    if (r.away !== undefined) {
      await userStatusStore.setSetting(tx, actor.user_id, 'presence_enabled', !r.away);
      await addToOutbox(tx, 'users', eventsInbox.notify, {
        realm_id: actor.realm_id,
        users: [actor.user_id],
        event: { type: 'user_settings', op: 'update', property: 'presence_enabled', value: !r.away },
      });
    }
    await addToOutbox(tx, 'users', eventsInbox.notify, {
      realm_id: actor.realm_id,
      users: await userStore.listActiveIds(tx, actor.realm_id),
      event: { type: 'user_status', user_id: actor.user_id, ...(r.away === undefined ? {} : { away: r.away }), ...change },
    });
  });
  if (r.away !== undefined) await doPresenceEnabledChanged(deps, actor, !r.away);
}
