/**
 * The life of an attachment after upload: linked to the messages that reference it (from the
 * messages service's attachments_changed events), deleted by its owner (spec 4.20), or swept
 * when no message has linked it for the grace period (spec 8: "deleted automatically a few
 * weeks after upload"). Rows go first, in a transaction with the owner's event; the object
 * goes after the commit, so a file is never reachable without its row.
 */
import type { Actor, MessageAttachmentsChanged } from '@zc/shared/contracts';
import { transaction } from '@zc/shared/db';
import type { UploadsDeps } from '../deps.js';
import { toApiAttachment } from '../lib/attachment-view.js';
import { invalidAttachment } from '../lib/errors.js';
import { thumbnailKeys } from '../lib/thumbnail-image.js';
import type { AttachmentRow } from '../store/attachment-store.js';
import { notifyOwner } from './notify.js';

async function removeObjects(deps: UploadsDeps, rows: readonly AttachmentRow[]): Promise<void> {
  for (const row of rows) {
    for (const key of [row.path_id, ...thumbnailKeys(row.path_id)]) {
      await deps.storage.remove(key).catch((err) => deps.log.error({ err, key }, 'could not remove a deleted attachment'));
    }
  }
}

/** DELETE /attachments/{id}: the owner's only; anyone else's id is as good as unknown. */
export async function doRemoveAttachment(deps: UploadsDeps, actor: Actor, attachmentId: number): Promise<void> {
  const row = await transaction(deps.pool, async (tx) => {
    const deleted = await deps.store.deleteOwned(tx, actor.user_id, attachmentId);
    if (!deleted || deleted.realm_id !== actor.realm_id) throw invalidAttachment();
    const used = await deps.store.spaceUsed(tx, actor.realm_id);
    await notifyOwner(tx, actor.realm_id, actor.user_id, { op: 'remove', attachment: { id: deleted.id }, upload_space_used: used });
    return deleted;
  });
  await removeObjects(deps, [row]);
}

/**
 * Makes a message link exactly the uploads its content references now. A sender claims a
 * file they uploaded, or one some other message already shares (they can only have its
 * unguessable path from there); a path id of nobody's upload, or another realm's, is ignored
 * (Zulip's do_claim_attachments skips those too). Each change comes twice (the messages
 * service's push and its event): one older than a change already applied does nothing.
 */
export async function doLinkMessageAttachments(deps: UploadsDeps, e: MessageAttachmentsChanged): Promise<void> {
  await transaction(deps.pool, async (tx) => {
    if (e.version !== undefined && !(await deps.store.advanceLinkVersion(tx, e.realm_id, e.message_id, e.version))) return;
    const found = await deps.store.findManyByPathIds(tx, e.realm_id, e.path_ids);
    const shared = new Set((await deps.store.messagesOf(tx, found.map((a) => a.id))).map((l) => l.attachment_id));
    const claimed = found.filter((a) => a.owner_id === e.sender_id || shared.has(a.id)).map((a) => a.id);
    const changed = await deps.store.replaceLinksOfMessage(tx, e.message_id, new Date(e.date_sent * 1000), claimed);
    if (changed.length === 0) return;
    const links = await deps.store.messagesOf(tx, changed);
    const used = await deps.store.spaceUsed(tx, e.realm_id);
    for (const id of changed) {
      const row = await deps.store.findById(tx, id);
      if (row) await notifyOwner(tx, row.realm_id, row.owner_id, { op: 'update', attachment: toApiAttachment(row, links), upload_space_used: used });
    }
  });
}

/** One sweep: deletes up to `limit` unclaimed uploads older than the grace period; returns how many. */
export async function doSweepUnclaimed(deps: UploadsDeps, limit = 500): Promise<number> {
  const before = new Date((deps.now() - deps.settings.unclaimedGraceSeconds) * 1000);
  const rows = await transaction(deps.pool, async (tx) => {
    const deleted = await deps.store.deleteUnclaimed(tx, before, limit);
    const realms = new Set(deleted.map((r) => r.realm_id));
    const used = new Map<number, number>();
    for (const realm of realms) used.set(realm, await deps.store.spaceUsed(tx, realm));
    for (const r of deleted) await notifyOwner(tx, r.realm_id, r.owner_id, { op: 'remove', attachment: { id: r.id }, upload_space_used: used.get(r.realm_id) ?? 0 });
    return deleted;
  });
  await removeObjects(deps, rows);
  if (rows.length) deps.log.info({ count: rows.length }, 'unclaimed uploads deleted');
  return rows.length;
}
