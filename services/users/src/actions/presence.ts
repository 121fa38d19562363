/**
 * POST /users/me/presence's write, and what a change of presence visibility does. Zulip's
 * rules (do_update_user_presence, send_presence_changed): the ping is stored unless the user
 * hides their presence; other users get a `presence` event only when the user comes online
 * (first ping, or active after being offline or idle), and only in realms small enough that
 * these events do not swamp everyone (PRESENCE_TIMING.maxUsersForPresenceEvents), since
 * clients poll the realm's presence every minute anyway.
 */
import { randomUUID } from 'node:crypto';
import { PRESENCE_TIMING, eventsInbox, type Actor } from '@zc/shared/contracts';
import type { UsersDeps } from '../deps.js';
import { presenceEvent } from '../lib/presence-view.js';
import { presenceVisibilityChanged, withVisibility } from '../presence/visibility.js';
import { presencePeopleStore } from '../store/presence-people-store.js';
import type { PresenceEntry } from '@zc/shared/presence';

export type PresenceStatus = 'active' | 'idle';

type Who = Pick<Actor, 'realm_id' | 'user_id' | 'email' | 'is_bot'>;

/** Sends the `presence` event for `entry` to the realm's active users (unless the realm is too big and `force` is off). */
async function announcePresence(deps: UsersDeps, who: Who, entry: PresenceEntry, nowMs: number, force: boolean): Promise<void> {
  if (!deps.bus) return;
  const limit = PRESENCE_TIMING.maxUsersForPresenceEvents;
  const users = await presencePeopleStore.listActiveIds(deps.pool, who.realm_id, force ? 1_000_000 : limit + 1);
  if (users.length > limit && !force) return;
  await deps.bus.publish(
    eventsInbox.notify,
    { realm_id: who.realm_id, users, event: presenceEvent({ user_id: who.user_id, email: who.email }, entry, nowMs / 1000) },
    { msgId: randomUUID() },
  );
}

/**
 * Records a ping of `who` at `nowMs`. Bots have no presence (Zulip lists none), so their pings
 * change nothing. `force` sends the event even if nothing changed (presence shown again).
 */
export async function doUpdatePresence(deps: UsersDeps, who: Who, status: PresenceStatus, opts: { nowMs?: number; force?: boolean } = {}): Promise<void> {
  if (who.is_bot) return;
  const nowMs = opts.nowMs ?? Date.now();
  const outcome = await withVisibility(deps, who.realm_id, async (store) => {
    const o = await store.ping(who.realm_id, who.user_id, status === 'active', Math.floor(nowMs / 1000), PRESENCE_TIMING);
    return o.kind === 'unloaded' ? undefined : o;
  });
  if (outcome.kind !== 'recorded' || outcome.realmDisabled) return;
  if (outcome.cameOnline || opts.force === true) await announcePresence(deps, who, outcome.entry, nowMs, opts.force === true);
}

/**
 * After a committed change of the user's `presence_enabled`: hidden users vanish from every
 * presence answer at once (clients age out what they hold within the offline threshold, as
 * with Zulip); a user showing their presence again is recorded active and announced, so they
 * appear online at once.
 */
export async function doPresenceEnabledChanged(deps: UsersDeps, who: Who, enabled: boolean): Promise<void> {
  await presenceVisibilityChanged(deps, who.realm_id, { user_id: who.user_id, presence_enabled: enabled });
  if (enabled) await doUpdatePresence(deps, who, 'active', { force: true });
}
