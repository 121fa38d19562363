/**
 * The realm's custom emoji as rendering and reactions need them. They belong to the uploads
 * service; this service keeps a read model (store/realm-emoji-store.ts), fed by the owner's
 * realm_emoji.changed events, which trails the owner by an event's trip.
 *
 * Read your writes (docs/CONVENTIONS.md): an emoji added a moment ago must render in the next
 * message, and one deactivated a moment ago must no longer be accepted as a new reaction. So
 * whenever a message or reaction names something that is, or could be, a custom emoji (a name
 * that is not a built-in emoji, or one the read model knows as custom), the owner is asked
 * about those names (one request, no more than the names in hand) and its answer is stored.
 * Only names that are all built-in and unknown to the read model are answered from it alone:
 * what the read model cannot know then is an administrator's override of a built-in name made
 * within the last event's trip, which renders as the built-in emoji until the event lands.
 * If the owner does not answer, the read model's answer is used rather than failing the send.
 */
import { uploads, uploadsEvents, type RealmEmoji, type RealmEmojiChanged } from '@zc/shared/contracts';
import type { MessagesDeps } from '../deps.js';
import { isBuiltInEmojiName } from '@zc/shared/emoji';
import { realmEmojiStore } from '../store/realm-emoji-store.js';

/** How long a send waits for the uploads service before rendering from the read model. */
const OWNER_TIMEOUT_MS = 2000;

export const REALM_EMOJI_READ_MODEL_EVENTS = [uploadsEvents.realmEmojiChanged] as const;

/** Applies one realm_emoji.changed event to the read model. */
export async function applyRealmEmojiChanged(deps: MessagesDeps, e: RealmEmojiChanged): Promise<void> {
  await realmEmojiStore.merge(deps.pool, e.realm_id, [e.emoji]);
}

/** The realm's emoji (active or not) with these names or ids, confirmed with the owner when the read model could be wrong. */
export async function realmEmojiNamed(deps: MessagesDeps, realmId: number, names: readonly string[], ids: readonly string[] = []): Promise<RealmEmoji[]> {
  if (names.length === 0 && ids.length === 0) return [];
  const known = await realmEmojiStore.findByNamesOrIds(deps.pool, realmId, names, ids);
  const mayBeCustom = ids.length > 0 || names.some((n) => !isBuiltInEmojiName(n)) || known.length > 0;
  if (!mayBeCustom) return known;
  try {
    const { emoji } = await deps.bus.request(uploads.findEmoji, { realm_id: realmId, names: [...names], ids: [...ids] }, { timeoutMs: OWNER_TIMEOUT_MS });
    await realmEmojiStore.merge(deps.pool, realmId, emoji);
    return emoji;
  } catch (err) {
    deps.log.warn({ err, realm_id: realmId }, 'uploads service did not confirm realm emoji; using the read model');
    return known;
  }
}

/** The active custom emoji by name, for the renderer's `realmEmoji` lookup. */
export async function activeRealmEmojiByName(deps: MessagesDeps, realmId: number, names: readonly string[]): Promise<Map<string, RealmEmoji>> {
  const found = await realmEmojiNamed(deps, realmId, names);
  return new Map(found.filter((e) => !e.deactivated).map((e) => [e.name, e]));
}
