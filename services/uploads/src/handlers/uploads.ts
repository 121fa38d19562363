/** Bus adapters of the uploads service: decode, call one action or query, reply. */
import type { Bus } from '@zc/shared/bus';
import { uploads, registerStateReply } from '@zc/shared/contracts';
import { doLinkMessageAttachments, doRemoveAttachment } from '../actions/attachments.js';
import { checkBeginEmojiUpload, checkDeactivateRealmEmoji } from '../actions/realm-emoji.js';
import { checkBeginUpload } from '../actions/uploads.js';
import type { UploadsDeps } from '../deps.js';
import { accessFile, downloadTarget, getTemporaryUrl, listAttachments, listUploadedImages, openTemporary, openThumbnail } from '../queries/attachments.js';
import { emojiImageTarget, findRealmEmoji, getRegisterState, listRealmEmoji } from '../queries/realm-emoji.js';

export function registerUploadHandlers(bus: Bus, deps: UploadsDeps): void {
  bus.serve(uploads.beginUpload, (r) => checkBeginUpload(deps, r.actor, r.content_length));
  bus.serve(uploads.openFile, async (r) => downloadTarget(deps, await accessFile(deps, r.actor, r.realm_id, r.path_id)));
  bus.serve(uploads.openThumbnail, (r) => openThumbnail(deps, r.actor, r.realm_id, r.path_id, r.format));
  bus.serve(uploads.uploadedImages, (r) => listUploadedImages(deps, r.realm_id, r.path_ids));
  bus.serve(uploads.temporaryUrl, async (r) => ({ url: await getTemporaryUrl(deps, r.actor, r.realm_id, r.path_id) }));
  bus.serve(uploads.openTemporary, (r) => openTemporary(deps, r.token));
  bus.serve(uploads.listAttachments, (r) => listAttachments(deps, r.actor));
  bus.serve(uploads.syncMessageAttachments, async (r) => {
    await doLinkMessageAttachments(deps, r);
    return {};
  });
  bus.serve(uploads.removeAttachment, async (r) => {
    await doRemoveAttachment(deps, r.actor, r.attachment_id);
    return {};
  });
  bus.serve(uploads.beginEmojiUpload, (r) => checkBeginEmojiUpload(deps, r.actor, r.emoji_name, r.content_length, r.multipart));
  bus.serve(uploads.deactivateEmoji, async (r) => {
    await checkDeactivateRealmEmoji(deps, r.actor, r.emoji_name);
    return {};
  });
  bus.serve(uploads.listEmoji, (r) => listRealmEmoji(deps, r.actor));
  bus.serve(uploads.findEmoji, (r) => findRealmEmoji(deps, r.realm_id, r.names, r.ids));
  bus.serve(uploads.openEmojiImage, (r) => emojiImageTarget(deps, r.realm_id, r.file));
  bus.serve(uploads.registerState, async (r) => {
    const { snapshot, state } = await getRegisterState(deps, r.actor, r.fetch);
    return registerStateReply(snapshot, state);
  });
}
