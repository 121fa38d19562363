/**
 * GET /messages/{message_id}/read_receipts (feature level 137): Zulip's read_receipts view.
 * Active users who have read the message and share that, the sender never; the requester
 * too when they have read it; bots as well (a way for bots to show a message was handled);
 * nobody the requester has muted or who has muted them (feature level 143). The mute read
 * model is brought up to date before a mute is answered, so it can decide this.
 */
import { users, type Actor } from '@zc/shared/contracts';
import { badRequest } from '@zc/shared/errors';
import { realmSettings } from '@zc/shared/policy';
import type { MessagesDeps } from '../deps.js';
import { messageStore } from '../store/message-store.js';
import { accessMessage, viewerOf } from './get-messages.js';

export async function getReadReceipts(deps: MessagesDeps, actor: Actor, messageId: number): Promise<number[]> {
  const realm = await deps.directory.realmFor(actor);
  if (!realmSettings(realm.settings).enable_read_receipts) throw badRequest('Read receipts are disabled in this organization.');
  const { row } = await accessMessage(deps.pool, viewerOf(actor), messageId);
  const readers = await messageStore.activeReaderIds(deps.pool, row.realm_id, messageId, row.sender_id, actor.user_id);
  if (readers.length === 0) return [];
  // The setting is asked of its owner: a user who has just turned it off must not be listed
  // on the strength of a copy that has not heard of it yet.
  const { users: found } = await deps.bus.request(users.userSettings, { realm_id: row.realm_id, user_ids: readers });
  const sharing = new Set(found.filter((u) => u.settings.send_read_receipts).map((u) => u.user_id));
  return readers.filter((id) => sharing.has(id));
}
