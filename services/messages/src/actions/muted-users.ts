/**
 * The read model of muted users (users service): stored from the owner's synchronous push
 * (messagesRpc.syncMutedUser) and from its domain event, whichever comes first; the other
 * finds the same revision stored and changes nothing.
 */
import type { MutedUserChange } from '@zc/shared/contracts';
import { transaction } from '@zc/shared/db';
import type { MessagesDeps } from '../deps.js';
import { messageStore } from '../store/message-store.js';
import { readModelStore } from '../store/read-model-store.js';
import { notifyFlagChange } from './flags.js';

/** Zulip's do_mute_user also marks what the muted user sent the muter as read (do_mark_muted_user_messages_as_read). */
export async function applyMutedUserChange(deps: MessagesDeps, change: MutedUserChange): Promise<void> {
  await transaction(deps.pool, async (tx) => {
    if (!(await readModelStore.applyMutedUser(tx, change)) || !change.muted) return;
    const ids = await messageStore.markSenderAsRead(tx, change.user_id, change.muted_user_id);
    await notifyFlagChange(tx, change, 'add', 'read', ids);
  });
}
