/**
 * POST /messages (spec 4.2): check the request against the read models (stream, policies,
 * recipients), render, compute every recipient's flags, and hand the result to the writer.
 */
import { Directory } from '@zc/shared/directory';
import { isAdmin, isGuest, isModerator, type Actor } from '@zc/shared/contracts';
import { AppError, badRequest } from '@zc/shared/errors';
import { isNewMember, realmSettings } from '@zc/shared/policy';
import type { MessagesDeps } from '../deps.js';
import { FLAG_BITS } from '../lib/flags.js';
import {
  normaliseContent,
  normaliseTopic,
  parseMessageType,
  parsePrivateTargets,
  parseStreamTarget,
  readBySenderDefault,
  type StreamTarget,
} from '../lib/message-input.js';
import { privateDisplayRecipient, toDisplayUser, toEventMessage, type SenderView } from '../lib/message-view.js';
import { widgetSubmessage } from '../lib/widget.js';
import { RENDERER_VERSION } from '../lib/render.js';
import { messageStore } from '../store/message-store.js';
import { RECIPIENT_HUDDLE, RECIPIENT_PERSONAL, readModelStore, type RealmRow, type SendContextRow, type StreamRow, type UserRow } from '../store/read-model-store.js';
import { pushAttachmentLinks } from './attachment-links.js';
import { confirmStreamWithOwner } from './read-model.js';
import { StaleSendContext } from './send-context.js';
import { renderMessage } from './render-message.js';
import type { PreparedSend, SendWriter } from './send-writer.js';

export interface SendRequest {
  actor: Actor;
  client: string;
  type: string;
  to: unknown;
  content: string;
  topic?: string;
  queue_id?: string;
  local_id?: string;
  read_by_sender?: boolean;
  /** Recipients besides the sender who get it already read (a notice of their own action, as Zulip's mark_as_read). */
  read_by?: number[];
  idempotency_key?: string;
  /** A message the server sends itself (notification bot): no access or post-policy checks. */
  internal?: boolean;
}

export const streamDoesNotExist = (target: StreamTarget) =>
  'name' in target
    ? new AppError('STREAM_DOES_NOT_EXIST', `Channel '${target.name}' does not exist`, 400, { stream: target.name })
    : new AppError('STREAM_DOES_NOT_EXIST', `Channel with ID '${target.stream_id}' does not exist`, 400, { stream_id: target.stream_id });

/** Zulip's stream_post_policy check (spec 2.5: 1 anyone, 2 admins, 3 full members, 4 moderators). */
export function checkPostPolicy(stream: StreamRow, sender: UserRow, realm: RealmRow, now: Date): void {
  switch (stream.stream_post_policy) {
    case 2:
      if (!isAdmin(sender)) throw badRequest('Only organization administrators can send to this channel.');
      return;
    case 4:
      if (!isModerator(sender)) throw badRequest('Only organization administrators and moderators can send to this channel.');
      return;
    case 3:
      if (isGuest(sender)) throw badRequest('Guests cannot send to this channel.');
      if (isNewMember(sender, realmSettings(realm.settings).waiting_period_threshold, now)) throw badRequest('New members cannot send to this channel.');
      return;
    default:
      return;
  }
}

/**
 * The stream a message goes to, checked for the sender, and its subscribers, with the realm's
 * read-model version they were read at. `known` is the read model's view (the send context).
 *
 * The read model trails the subscriptions service by an event's trip. Where a stale subscriber
 * set could hand the message to someone who just lost access, or keep it from someone just
 * added who could then never read it, the owner confirms the set: private streams, and
 * streams with guest subscribers (a guest's access ends with their subscription). A stream
 * the read model does not know, and a sender it thinks unsubscribed, are asked about too
 * (read your writes: "subscribe, then post" is one script). Other sends go by the read model:
 * a public stream's history is open to every member anyway. `checkSendOnce` confirms once
 * more when the message mentions someone the read model does not count as a subscriber.
 */
async function checkStreamTarget(
  deps: MessagesDeps,
  writer: SendWriter,
  actor: Actor,
  sender: UserRow,
  realm: RealmRow,
  target: StreamTarget,
  known: SendContextRow,
  now: Date,
  internal: boolean,
): Promise<{ stream: StreamRow; subscriberIds: number[]; version: number; confirmed: boolean }> {
  let stream: StreamRow | undefined = known.stream ?? undefined;
  let subscribed = known.subscriber_ids.includes(actor.user_id);
  let subscriberIds = known.subscriber_ids;
  let version = known.version;
  let confirmed = false;
  if (!stream || stream.invite_only || known.guest_subscribed || !subscribed) {
    const owner = await confirmStreamWithOwner(deps, actor.realm_id, actor.user_id, target, known);
    ({ stream, subscribed, subscriberIds } = owner);
    confirmed = true;
    if (owner.stored) {
      // Storing the answer moved the realm's read-model version: go on with the rows as stored
      // and that version (the answer's own `subscribed` stays the authority on the sender).
      const again = await writer.contexts.get(actor.realm_id, actor.user_id, target, { fresh: true });
      stream = again.stream ?? undefined;
      subscriberIds = again.subscriber_ids;
      version = again.version;
    }
  }
  if (!stream || stream.is_archived) throw streamDoesNotExist(target);
  if (internal) return { stream, subscriberIds, version, confirmed };
  // Public streams take messages from any member; private ones (and any stream, for a
  // guest) only from subscribers, or from a bot whose owner is subscribed.
  if (stream.invite_only || isGuest(sender)) {
    const ownerSubscribed = sender.is_bot && sender.bot_owner_id !== null && subscriberIds.includes(sender.bot_owner_id);
    if (!subscribed && !ownerSubscribed) throw badRequest(`Not authorized to send to channel '${stream.name}'`);
  }
  checkPostPolicy(stream, sender, realm, now);
  return { stream, subscriberIds, version, confirmed };
}

interface PrivateRecipients {
  recipientId: number;
  recipientType: number;
  users: UserRow[];
}

async function checkPrivateTargets(deps: MessagesDeps, actor: Actor, sender: UserRow, raw: unknown): Promise<PrivateRecipients> {
  const targets = parsePrivateTargets(raw);
  const ids = 'user_ids' in targets ? targets.user_ids : [];
  const emails = 'emails' in targets ? targets.emails : [];
  const resolved = await deps.directory.resolveUsers(deps.pool, actor.realm_id, [...ids, ...emails], { deliveryEmails: true });
  const missing = resolved.missing[0];
  if (typeof missing === 'string') throw badRequest(`Invalid email '${missing}'`);
  if (missing !== undefined) throw badRequest(`Invalid user ID ${missing}`);
  for (const u of resolved.found) {
    if (!u.is_active && !u.is_bot) throw badRequest(`'${u.email}' is no longer using Zulip.`);
  }
  const others = resolved.found.filter((u) => u.id !== sender.id);
  const everyone = [sender, ...others];
  if (others.length <= 1) {
    const receiver = others[0] ?? sender;
    const rids = await readModelStore.personalRecipients(deps.pool, actor.realm_id, [receiver.id]);
    return { recipientId: rids.get(receiver.id) as number, recipientType: RECIPIENT_PERSONAL, users: [receiver] };
  }
  const sorted = everyone.map((u) => u.id).sort((a, b) => a - b);
  const recipientId = await readModelStore.huddleRecipient(deps.pool, actor.realm_id, sorted);
  return { recipientId, recipientType: RECIPIENT_HUDDLE, users: everyone };
}

function senderView(u: UserRow): SenderView {
  return { id: u.id, email: u.email, delivery_email: u.delivery_email, full_name: u.full_name, avatar_source: u.avatar_source, avatar_version: u.avatar_version };
}

/** Checks made against read-model rows that changed before the write are made again, this many times at most. */
const SEND_CHECK_ATTEMPTS = 3;

/** Checks a send and writes it; returns the message id (the earlier one for a repeated Idempotency-Key). */
export async function checkSendMessage(deps: MessagesDeps, writer: SendWriter, r: SendRequest): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    try {
      // The first check may use the writer's cached read-model rows; a retry reads them anew.
      // The last attempt is written without the freshness check, as if it had won the race.
      return await checkSendOnce(deps, writer, r, { fresh: attempt > 1, checked: attempt < SEND_CHECK_ATTEMPTS });
    } catch (e) {
      if (!(e instanceof StaleSendContext) || attempt >= SEND_CHECK_ATTEMPTS) throw e;
    }
  }
}

async function checkSendOnce(deps: MessagesDeps, writer: SendWriter, r: SendRequest, opts: { fresh: boolean; checked: boolean }): Promise<number> {
  const { actor } = r;
  if (r.idempotency_key !== undefined) {
    const earlier = await messageStore.findIdempotent(deps.pool, actor.user_id, r.idempotency_key);
    if (earlier !== undefined) return earlier;
  }
  const kind = parseMessageType(r.type);
  const content = normaliseContent(r.content);
  const target = kind === 'stream' ? parseStreamTarget(r.to) : null;
  const topicName = kind === 'stream' ? normaliseTopic(r.topic) : '';
  const now = new Date();
  const known = await writer.contexts.get(actor.realm_id, actor.user_id, target, { fresh: opts.fresh });
  let readModelVersion = known.version;
  const realm = known.realm && Directory.isCurrentFor(known.realm, actor) ? known.realm : await deps.directory.realmFor(actor);
  const senderRow = known.sender ?? (await deps.directory.resolveUsers(deps.pool, actor.realm_id, [actor.user_id])).found[0];
  if (!senderRow) throw badRequest('Invalid sender');

  let recipientId: number;
  let recipientUserIds: number[];
  let streamId: number | null = null;
  let topic = '';
  let displayRecipient: PreparedSend['event']['display_recipient'];
  let publicStream = false;
  let subscribersConfirmed = true;
  if (target) {
    topic = topicName;
    const { stream, subscriberIds, version, confirmed } = await checkStreamTarget(deps, writer, actor, senderRow, realm, target, known, now, r.internal === true);
    subscribersConfirmed = confirmed;
    readModelVersion = version;
    recipientId = stream.recipient_id;
    streamId = stream.id;
    displayRecipient = stream.name;
    recipientUserIds = subscriberIds;
    publicStream = !stream.invite_only;
  } else {
    const p = await checkPrivateTargets(deps, actor, senderRow, r.to);
    recipientId = p.recipientId;
    recipientUserIds = p.users.map((u) => u.id);
    displayRecipient = privateDisplayRecipient(p.users.map(toDisplayUser), toDisplayUser(senderRow), p.recipientType);
  }

  // The sender always gets the message, first (their own client shows it soonest).
  let userIds = [actor.user_id, ...new Set(recipientUserIds.filter((id) => id !== actor.user_id))];
  // Flags go only to those who get the message: mentioning someone does not send it to them.
  let { rendered, topicLinks, contentFlags } = await renderMessage(deps, realm, { content, senderId: actor.user_id, streamId, recipientId, topic, recipientIds: userIds });
  if (target && !subscribersConfirmed && rendered.mentioned_user_ids.some((id) => !userIds.includes(id))) {
    // Someone mentioned whom the read model does not count as a subscriber may have been
    // subscribed a moment ago ("subscribe them, then mention them"): the owner says.
    const owner = await confirmStreamWithOwner(deps, actor.realm_id, actor.user_id, target, { stream: known.stream, subscriber_ids: recipientUserIds });
    if (owner.stored) {
      const again = await writer.contexts.get(actor.realm_id, actor.user_id, target, { fresh: true });
      readModelVersion = again.version;
      userIds = [actor.user_id, ...new Set(again.subscriber_ids.filter((id) => id !== actor.user_id))];
      ({ rendered, topicLinks, contentFlags } = await renderMessage(deps, realm, { content, senderId: actor.user_id, streamId, recipientId, topic, recipientIds: userIds }));
    }
  }
  const readBySender = r.read_by_sender ?? readBySenderDefault(r.client);
  // Zulip's do_send_messages: those who muted the sender get the message already read.
  const mutedBy = new Set(known.sender?.muted_by ?? (await readModelStore.mutersOf(deps.pool, actor.user_id)));
  const flagsOf = (userId: number): number => {
    let f = (streamId === null ? FLAG_BITS.is_private : 0) | contentFlags(userId);
    if ((userId === actor.user_id && readBySender) || mutedBy.has(userId) || r.read_by?.includes(userId)) f |= FLAG_BITS.read;
    return f;
  };

  const message = {
    realm_id: actor.realm_id,
    sender_id: actor.user_id,
    recipient_id: recipientId,
    stream_id: streamId,
    topic,
    content,
    rendered_content: rendered.html,
    rendered_content_version: RENDERER_VERSION,
    date_sent: now,
    sending_client: r.client,
    is_me_message: rendered.is_me_message,
    has_link: rendered.has_link,
    has_image: rendered.has_image,
    has_attachment: rendered.has_attachment,
  };
  const { id: _placeholder, ...event } = toEventMessage({ ...message, id: 0 }, senderView(senderRow), displayRecipient, realm.subdomain, topicLinks);
  // A widget's first submessage carries the message id, which the writer fills in.
  const widget = widgetSubmessage({ id: 0, sender_id: actor.user_id, content });
  if (widget) event.submessages = [{ ...widget }];
  const id = await writer.submit({
    message,
    recipients: userIds.map((id) => ({ id, flags: flagsOf(id) })),
    event,
    ...(r.queue_id !== undefined ? { senderQueueId: r.queue_id } : {}),
    ...(r.local_id !== undefined ? { localId: r.local_id } : {}),
    ...(publicStream ? { publicStream } : {}),
    ...(rendered.attachment_path_ids.length ? { attachmentPathIds: rendered.attachment_path_ids } : {}),
    ...(r.idempotency_key !== undefined ? { idempotencyKey: r.idempotency_key } : {}),
    ...(opts.checked ? { readModelVersion } : {}),
  });
  if (rendered.attachment_path_ids.length) {
    await pushAttachmentLinks(deps, [
      { realm_id: actor.realm_id, message_id: id, sender_id: actor.user_id, date_sent: Math.floor(now.getTime() / 1000), path_ids: rendered.attachment_path_ids, version: 0 },
    ]);
  }
  return id;
}
