/**
 * POST /messages (spec 4.2): check the request against the read models (stream, policies,
 * recipients), render, compute every recipient's flags, and hand the result to the writer.
 */
import { Role, isAdmin, isGuest, isModerator, type Actor } from '@zc/shared/contracts';
import { AppError, badRequest } from '@zc/shared/errors';
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
import { RENDERER_VERSION, renderContent, type MentionUser, type Rendered } from '../lib/render.js';
import { messageStore } from '../store/message-store.js';
import { RECIPIENT_HUDDLE, RECIPIENT_PERSONAL, readModelStore, type RealmRow, type StreamRow, type UserRow } from '../store/read-model-store.js';
import { ensureRealm, resolveUsers, streamAccessFor } from './read-model.js';
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
  idempotency_key?: string;
  /** A message the server sends itself (notification bot): no access or post-policy checks. */
  internal?: boolean;
}

export const streamDoesNotExist = (target: StreamTarget) =>
  'name' in target
    ? new AppError('STREAM_DOES_NOT_EXIST', `Channel '${target.name}' does not exist`, 400, { stream: target.name })
    : new AppError('STREAM_DOES_NOT_EXIST', `Channel with ID '${target.stream_id}' does not exist`, 400, { stream_id: target.stream_id });

const DAY_MS = 24 * 3600 * 1000;

/** Zulip's stream_post_policy check (spec 2.5: 1 anyone, 2 admins, 3 full members, 4 moderators). */
function checkPostPolicy(stream: StreamRow, sender: UserRow, realm: RealmRow, now: Date): void {
  switch (stream.stream_post_policy) {
    case 2:
      if (!isAdmin(sender)) throw badRequest('Only organization administrators can send to this channel.');
      return;
    case 4:
      if (!isModerator(sender)) throw badRequest('Only organization administrators and moderators can send to this channel.');
      return;
    case 3: {
      if (isGuest(sender)) throw badRequest('Guests cannot send to this channel.');
      const waitingDays = Number(realm.settings.waiting_period_threshold ?? 0);
      const isNew = sender.role >= Role.MEMBER && now.getTime() - sender.date_joined.getTime() < waitingDays * DAY_MS;
      if (isNew) throw badRequest('New members cannot send to this channel.');
      return;
    }
    default:
      return;
  }
}

/**
 * The stream a message goes to, checked for the sender, and its subscribers. `known` is the
 * read model's view (from the send context); when it lacks the stream or the sender's
 * subscription, the subscriptions service is asked (read your writes).
 */
async function checkStreamTarget(
  deps: MessagesDeps,
  actor: Actor,
  sender: UserRow,
  realm: RealmRow,
  target: StreamTarget,
  known: { stream: StreamRow | null; subscriber_ids: number[] },
  now: Date,
  internal: boolean,
): Promise<{ stream: StreamRow; subscriberIds: number[] }> {
  let stream: StreamRow | undefined = known.stream ?? undefined;
  let subscribed = known.subscriber_ids.includes(actor.user_id);
  let subscriberIds = known.subscriber_ids;
  if (!stream || !subscribed) {
    ({ stream, subscribed } = await streamAccessFor(deps, actor.realm_id, actor.user_id, target));
    if (stream) subscriberIds = await readModelStore.subscriberIds(deps.pool, stream.id);
  }
  if (!stream || stream.is_archived) throw streamDoesNotExist(target);
  if (internal) return { stream, subscriberIds };
  // Public streams take messages from any member; private ones (and any stream, for a
  // guest) only from subscribers, or from a bot whose owner is subscribed.
  if (stream.invite_only || isGuest(sender)) {
    const ownerSubscribed = sender.is_bot && sender.bot_owner_id !== null && subscriberIds.includes(sender.bot_owner_id);
    if (!subscribed && !ownerSubscribed) throw badRequest(`Not authorized to send to channel '${stream.name}'`);
  }
  checkPostPolicy(stream, sender, realm, now);
  return { stream, subscriberIds };
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
  const resolved = await resolveUsers(deps, deps.pool, actor.realm_id, ids, emails);
  if (resolved.missingEmails.length) throw badRequest(`Invalid email '${resolved.missingEmails[0]}'`);
  if (resolved.missingIds.length) throw badRequest(`Invalid user ID ${resolved.missingIds[0]}`);
  for (const u of resolved.users) {
    if (!u.is_active && !u.is_bot) throw badRequest(`'${u.email}' is no longer using Zulip.`);
  }
  const others = resolved.users.filter((u) => u.id !== sender.id);
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

/** The renderer's lookups, preloaded for the names and streams the content mentions. */
async function renderFor(deps: MessagesDeps, realm: RealmRow, content: string): Promise<Rendered> {
  const names = new Set<string>();
  const ids = new Set<number>();
  for (const m of content.matchAll(/@_?\*\*([^*\n]+?)\*\*/g)) {
    const body = m[1] as string;
    const bar = /^(.*)\|(\d+)$/.exec(body);
    if (bar) ids.add(Number(bar[2]));
    else names.add(body);
  }
  const streamNames = [...content.matchAll(/#\*\*([^*\n]+?)\*\*/g)].map((m) => m[1] as string);
  const [byName, byId, streams] = await Promise.all([
    readModelStore.usersByFullName(deps.pool, realm.id, [...names]),
    readModelStore.usersByIds(deps.pool, realm.id, [...ids]),
    Promise.all(streamNames.map((n) => readModelStore.streamByName(deps.pool, realm.id, n))),
  ]);
  const mentionUser = (u: UserRow): MentionUser => ({ id: u.id, full_name: u.full_name, is_active: u.is_active });
  return renderContent(content, {
    realmUrl: realm.url,
    users: {
      byFullName: (name) => {
        const matches = byName.filter((u) => u.full_name.toLowerCase() === name.toLowerCase());
        return matches.length === 1 ? mentionUser(matches[0] as UserRow) : undefined;
      },
      byId: (id) => {
        const u = byId.find((x) => x.id === id);
        return u ? mentionUser(u) : undefined;
      },
    },
    streams: {
      byName: (name) => {
        const s = streams.find((x) => x?.name.toLowerCase() === name.toLowerCase() && !x.invite_only);
        return s ? { id: s.id, name: s.name } : undefined;
      },
    },
  });
}

function senderView(u: UserRow): SenderView {
  return { id: u.id, email: u.email, delivery_email: u.delivery_email, full_name: u.full_name, avatar_source: u.avatar_source, avatar_version: u.avatar_version };
}

/** Checks a send and writes it; returns the message id (the earlier one for a repeated Idempotency-Key). */
export async function checkSendMessage(deps: MessagesDeps, writer: SendWriter, r: SendRequest): Promise<number> {
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
  const known = await readModelStore.sendContext(deps.pool, actor.realm_id, actor.user_id, target);
  const realm = known.realm ?? (await ensureRealm(deps, actor.realm_id));
  const senderRow = known.sender ?? (await resolveUsers(deps, deps.pool, actor.realm_id, [actor.user_id], [])).users[0];
  if (!senderRow) throw badRequest('Invalid sender');

  let recipientId: number;
  let recipientUserIds: number[];
  let streamId: number | null = null;
  let topic = '';
  let displayRecipient: PreparedSend['event']['display_recipient'];
  if (target) {
    topic = topicName;
    const { stream, subscriberIds } = await checkStreamTarget(deps, actor, senderRow, realm, target, known, now, r.internal === true);
    recipientId = stream.recipient_id;
    streamId = stream.id;
    displayRecipient = stream.name;
    recipientUserIds = subscriberIds;
  } else {
    const p = await checkPrivateTargets(deps, actor, senderRow, r.to);
    recipientId = p.recipientId;
    recipientUserIds = p.users.map((u) => u.id);
    displayRecipient = privateDisplayRecipient(p.users.map(toDisplayUser), toDisplayUser(senderRow), p.recipientType);
  }

  const rendered = await renderFor(deps, realm, content);
  const topicWildcardUsers =
    rendered.wildcard_mention === 'topic' && streamId !== null
      ? new Set([actor.user_id, ...(await messageStore.topicParticipants(deps.pool, recipientId, topic))])
      : undefined;
  const mentioned = new Set(rendered.mentioned_user_ids);
  const readBySender = r.read_by_sender ?? readBySenderDefault(r.client);
  const flagsOf = (userId: number): number => {
    let f = streamId === null ? FLAG_BITS.is_private : 0;
    if (mentioned.has(userId)) f |= FLAG_BITS.mentioned;
    // @**all** reaches everyone; @**topic** only those who took part in the topic (and the sender).
    if (rendered.wildcard_mention === 'stream' || topicWildcardUsers?.has(userId)) f |= FLAG_BITS.wildcard_mentioned;
    if (userId === actor.user_id && readBySender) f |= FLAG_BITS.read;
    return f;
  };
  // The sender always gets the message, first (their own client shows it soonest).
  const userIds = [actor.user_id, ...new Set(recipientUserIds.filter((id) => id !== actor.user_id))];

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
  const { id: _placeholder, ...event } = toEventMessage({ ...message, id: 0 }, senderView(senderRow), displayRecipient, realm.subdomain);
  return writer.submit({
    message,
    recipients: userIds.map((id) => ({ id, flags: flagsOf(id) })),
    event,
    ...(r.queue_id !== undefined ? { senderQueueId: r.queue_id } : {}),
    ...(r.local_id !== undefined ? { localId: r.local_id } : {}),
    ...(r.idempotency_key !== undefined ? { idempotencyKey: r.idempotency_key } : {}),
  });
}
