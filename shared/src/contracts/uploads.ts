/**
 * The uploads service: uploaded files and their attachment records (schema `uploads`).
 *
 * File bytes never cross NATS (its payload limit, and memory): these requests only decide
 * *whether* and *where*. The answer names one replica's internal HTTP endpoint and carries a
 * short-lived signed token; the gateway then streams the body there (upload) or from there
 * (download), or redirects the client to a signed object-storage URL.
 */
import { Type, type Static } from '@sinclair/typebox';
import { event, rpc } from '../bus/contract.js';
import { Actor, RegisterStateReply, RegisterStateRequest } from './common.js';
import { MessageAttachmentsChanged } from './messages.js';

/** A message that links an attachment, as GET /attachments shows it (times in milliseconds, as Zulip). */
export const AttachmentMessage = Type.Object({ id: Type.Integer(), date_sent: Type.Integer() });

/** An attachment as clients see it (GET /attachments, `attachment` events). */
export const Attachment = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  path_id: Type.String(),
  size: Type.Integer(),
  /** Milliseconds since the epoch, as Zulip sends it. */
  create_time: Type.Integer(),
  messages: Type.Array(AttachmentMessage),
});
export type Attachment = Static<typeof Attachment>;

/**
 * One size an uploaded image is thumbnailed into (/register's `server_thumbnail_formats`).
 * A thumbnail's URL is `/user_uploads/thumbnail/{path_id}/{name}`.
 */
export const ThumbnailFormat = Type.Object({
  name: Type.String(),
  max_width: Type.Integer(),
  max_height: Type.Integer(),
  format: Type.String(),
  animated: Type.Boolean(),
});
export type ThumbnailFormat = Static<typeof ThumbnailFormat>;

/**
 * The formats uploaded images are thumbnailed into, Zulip's THUMBNAIL_OUTPUT_FORMATS: one
 * still WebP for every image, and an animated one for animated images only.
 */
export const THUMBNAIL_FORMATS: readonly ThumbnailFormat[] = [
  { name: '840x560-anim.webp', max_width: 840, max_height: 560, format: 'webp', animated: true },
  { name: '840x560.webp', max_width: 840, max_height: 560, format: 'webp', animated: false },
];

/** The format inline previews show (Zulip always uses the still one; clients swap in the animated one). */
export const DEFAULT_THUMBNAIL_FORMAT = '840x560.webp';

/** An uploaded image that has thumbnails, as message rendering needs it. */
export const UploadedImage = Type.Object({
  path_id: Type.String(),
  original_width: Type.Integer(),
  original_height: Type.Integer(),
  animated: Type.Boolean(),
});
export type UploadedImage = Static<typeof UploadedImage>;

/** Where the gateway streams an upload's body to, or a download's bytes from. */
export const StreamTarget = Type.Object({
  /** `stream`: an internal URL of an uploads replica (token included); `redirect`: send the client there. */
  kind: Type.Union([Type.Literal('stream'), Type.Literal('redirect')]),
  url: Type.String(),
});
export type StreamTarget = Static<typeof StreamTarget>;

/**
 * A realm's custom emoji as clients see it (GET /realm/emoji, /register's `realm_emoji`, the
 * `realm_emoji` event). `id` is a string, as Zulip sends it (it is also a realm_emoji
 * reaction's emoji_code); URLs are relative to the realm's URL.
 */
export const RealmEmoji = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    source_url: Type.String(),
    /** A still first frame of an animated emoji; null for still images. */
    still_url: Type.Union([Type.String(), Type.Null()]),
    deactivated: Type.Boolean(),
    author_id: Type.Union([Type.Integer(), Type.Null()]),
  },
  { additionalProperties: false },
);
export type RealmEmoji = Static<typeof RealmEmoji>;

export const uploads = {
  /**
   * POST /user_uploads, before any byte is read: checks what can be checked from the declared
   * length (the size limit, the realm's quota) and names the replica to stream the body to.
   */
  beginUpload: rpc('uploads.v1.begin_upload', {
    request: Type.Object({ actor: Actor, content_length: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]) }),
    reply: StreamTarget,
  }),
  /**
   * GET /user_uploads/{realm_id}/{path}: Zulip's access rules (the uploader, or anyone who can
   * read a message linking the file; never another realm); 404 when missing or deleted.
   */
  openFile: rpc('uploads.v1.open_file', {
    // A read: may be asked again of another replica (Bus.request).
    safe: true,
    request: Type.Object({ actor: Actor, realm_id: Type.Integer(), path_id: Type.String() }),
    reply: StreamTarget,
  }),
  /**
   * GET /user_uploads/thumbnail/{realm_id}/{path}/{format}: a thumbnail, under the same access
   * rules as its file; 404 for a file with no thumbnails (not an image) or a format not made.
   */
  openThumbnail: rpc('uploads.v1.open_thumbnail', {
    safe: true,
    request: Type.Object({ actor: Actor, realm_id: Type.Integer(), path_id: Type.String(), format: Type.String() }),
    reply: StreamTarget,
  }),
  /**
   * The realm's uploads among `path_ids` that are thumbnailed images (message rendering: only
   * those get an inline preview). Not an access check: rendering only learns their sizes.
   */
  uploadedImages: rpc('uploads.v1.uploaded_images', {
    safe: true,
    request: Type.Object({ realm_id: Type.Integer(), path_ids: Type.Array(Type.String(), { maxItems: 1000 }) }),
    reply: Type.Object({ images: Type.Array(UploadedImage) }),
  }),
  /** GET /api/v1/user_uploads/{realm_id}/{path}: the same checks, answered with a URL valid for 60 seconds. */
  temporaryUrl: rpc('uploads.v1.temporary_url', {
    request: Type.Object({ actor: Actor, realm_id: Type.Integer(), path_id: Type.String() }),
    reply: Type.Object({ url: Type.String() }),
  }),
  /** GET /user_uploads/temporary/{token}/{filename}, unauthenticated: the token is the permission. */
  openTemporary: rpc('uploads.v1.open_temporary', {
    // A read: may be asked again of another replica (Bus.request).
    safe: true,
    request: Type.Object({ token: Type.String(), filename: Type.String() }),
    reply: StreamTarget,
  }),
  /** GET /attachments: the caller's own uploads, newest first, and the realm's space used in bytes. */
  listAttachments: rpc('uploads.v1.list_attachments', {
    // A read: may be asked again of another replica (Bus.request).
    safe: true,
    request: Type.Object({ actor: Actor }),
    reply: Type.Object({ attachments: Type.Array(Attachment), upload_space_used: Type.Integer() }),
  }),
  /**
   * The uploads a message links now, pushed by the messages service before it answers a send,
   * edit or deletion that changes them, so the file is shared (or no longer) by the time the
   * sender hears back (the attachments_changed event carries the same change; versions make
   * whichever comes second a no-op). Idempotent, so it may be asked again of another replica.
   */
  syncMessageAttachments: rpc('uploads.v1.sync_message_attachments', {
    safe: true,
    request: MessageAttachmentsChanged,
    reply: Type.Object({}),
  }),
  /** DELETE /attachments/{id} (spec 4.20): only the owner; the file becomes unreachable at once. */
  removeAttachment: rpc('uploads.v1.remove_attachment', {
    request: Type.Object({ actor: Actor, attachment_id: Type.Integer() }),
    reply: Type.Object({}),
  }),
  /**
   * POST /realm/emoji/{emoji_name}, before any byte is read: the name rules, the realm's
   * add-custom-emoji policy, a name already taken and the declared length are checked; the
   * answer names the replica to stream the image to (its token carries the name).
   */
  beginEmojiUpload: rpc('uploads.v1.begin_emoji_upload', {
    request: Type.Object({
      actor: Actor,
      emoji_name: Type.String(),
      content_length: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
      /** Whether the body is multipart at all (a body of another kind holds no file). */
      multipart: Type.Boolean(),
    }),
    reply: StreamTarget,
  }),
  /** DELETE /realm/emoji/{emoji_name}: deactivates it (administrators, or the emoji's author). */
  deactivateEmoji: rpc('uploads.v1.deactivate_emoji', {
    request: Type.Object({ actor: Actor, emoji_name: Type.String() }),
    reply: Type.Object({}),
  }),
  /** GET /realm/emoji: every custom emoji of the actor's realm, deactivated ones included, by id. */
  listEmoji: rpc('uploads.v1.list_emoji', {
    // A read: may be asked again of another replica (Bus.request).
    safe: true,
    request: Type.Object({ actor: Actor }),
    reply: Type.Object({ emoji: Type.Record(Type.String(), RealmEmoji) }),
  }),
  /**
   * The owner's answer about some of a realm's emoji, for services whose read model may lag
   * (messages: rendering `:name:`, realm_emoji reactions): every emoji, active or not, with
   * one of these names or ids.
   */
  findEmoji: rpc('uploads.v1.find_emoji', {
    // A read: may be asked again of another replica (Bus.request).
    safe: true,
    request: Type.Object({
      realm_id: Type.Integer(),
      names: Type.Array(Type.String(), { maxItems: 100 }),
      ids: Type.Array(Type.String(), { maxItems: 100 }),
    }),
    reply: Type.Object({ emoji: Type.Array(RealmEmoji) }),
  }),
  /** GET /user_avatars/{realm_id}/emoji/images/{file}: emoji images are public, as Zulip serves them. */
  openEmojiImage: rpc('uploads.v1.open_emoji_image', {
    // A read: may be asked again of another replica (Bus.request).
    safe: true,
    request: Type.Object({ realm_id: Type.Integer(), file: Type.String() }),
    reply: StreamTarget,
  }),
  /** /register's `realm_emoji`, read in one snapshot. */
  registerState: rpc('uploads.v1.register_state', { request: RegisterStateRequest, reply: RegisterStateReply, safe: true }),
} as const;

/** A realm emoji was added or deactivated (the whole emoji; an id's name and image never change). */
export const RealmEmojiChanged = Type.Object({ realm_id: Type.Integer(), emoji: RealmEmoji });
export type RealmEmojiChanged = Static<typeof RealmEmojiChanged>;

export const uploadsEvents = {
  realmEmojiChanged: event('uploads.evt.v1.realm_emoji.changed', RealmEmojiChanged),
} as const;
