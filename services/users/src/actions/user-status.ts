/**
 * POST /users/me/status (Zulip's do_update_user_status). Since feature level 148 `away` is a
 * legacy way to set the `presence_enabled` setting (away = !presence_enabled); the presence
 * machinery is told after the commit. Every active member gets a `user_status` event with
 * the fields the request set.
 */
import { eventsInbox, uploads, type Actor } from '@zc/shared/contracts';
import { isBuiltInEmojiName, type RealmEmojiRef } from '@zc/shared/emoji';
import { isAppError, serviceUnavailable } from '@zc/shared/errors';
import { transaction } from '@zc/shared/db';
import { addToOutbox } from '@zc/shared/outbox';
import type { UsersDeps } from '../deps.js';
import { checkStatusRequest, checkStatusShape, statusEmojiLookup, type StatusRequest } from '../lib/user-status.js';
import { userStatusStore } from '../store/user-status-store.js';
import { userStore } from '../store/user-store.js';
import { doPresenceEnabledChanged } from './presence.js';

/** How long a status change waits for the uploads service to say which custom emoji exist. */
const EMOJI_OWNER_TIMEOUT_MS = 2000;

/**
 * The realm's emoji the request names, asked of their owner, the uploads service (this service
 * keeps no copy): one just added may be set at once, and one deactivated is refused at once.
 * If the owner does not answer, a built-in emoji is still accepted by name; anything that
 * needs the owner's word (a custom name, realm_emoji) is answered 503.
 */
async function realmEmojiFor(deps: UsersDeps, realmId: number, r: StatusRequest): Promise<RealmEmojiRef[]> {
  const lookup = statusEmojiLookup(r);
  if (!lookup) return [];
  try {
    if (!deps.bus) throw serviceUnavailable();
    return (await deps.bus.request(uploads.findEmoji, { realm_id: realmId, ...lookup }, { timeoutMs: EMOJI_OWNER_TIMEOUT_MS })).emoji;
  } catch (e) {
    const builtIn = lookup.ids.length === 0 && r.reaction_type !== 'realm_emoji' && lookup.names.every(isBuiltInEmojiName);
    if (builtIn && isAppError(e) && e.code === 'SERVICE_UNAVAILABLE') {
      deps.log.warn({ realm_id: realmId }, 'uploads service did not answer; the status emoji is taken as built-in');
      return [];
    }
    throw e;
  }
}

export async function checkUpdateUserStatus(deps: UsersDeps, actor: Actor, r: StatusRequest): Promise<void> {
  checkStatusShape(r);
  const change = checkStatusRequest(r, await realmEmojiFor(deps, actor.realm_id, r));
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
