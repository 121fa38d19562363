/**
 * POST /typing (Zulip's send_notification_backend, check_send_typing_notification,
 * do_send_stream_typing_notification): typing start/stop events to the people who would
 * receive the message, never stored. A direct message's notification goes to every
 * recipient, the sender included (Zulip lists the sender among the recipients); a stream
 * topic's to the stream's active subscribers other than the sender, and to nobody on streams
 * too big for it. A start is remembered so the server sends its stop if the client never does
 * (typing/expiry.ts).
 */
import { Directory } from '@zc/shared/directory';
import { randomUUID } from 'node:crypto';
import { TYPING_TIMING, eventsInbox, isGuest, users, type Actor, type ClientNotify } from '@zc/shared/contracts';
import { badRequest } from '@zc/shared/errors';
import type { MessagesDeps } from '../deps.js';
import { readModelStore, type UserRow } from '../store/read-model-store.js';
import type { TypingExpiry } from '../typing/expiry.js';
import { confirmStreamWithOwner } from './read-model.js';
import { checkPostPolicy } from './send-message.js';

export interface TypingRequest {
  actor: Actor;
  type: 'private' | 'stream';
  op: 'start' | 'stop';
  to?: number[] | string[] | undefined;
  stream_id?: number | undefined;
  topic?: string | undefined;
}

const invalidChannelId = () => badRequest('Invalid channel ID');

/** The sender's typing settings, from the users service (which owns them). */
async function typingSettingsOf(deps: MessagesDeps, actor: Actor): Promise<{ private: boolean; stream: boolean }> {
  const { users: found } = await deps.bus.request(users.userSettings, { realm_id: actor.realm_id, user_ids: [actor.user_id] });
  const s = found[0]?.settings;
  return { private: s?.send_private_typing_notifications !== false, stream: s?.send_stream_typing_notifications !== false };
}

const typingUser = (u: Pick<UserRow, 'id' | 'email'>) => ({ user_id: u.id, email: u.email });

async function senderRow(deps: MessagesDeps, actor: Actor, known: UserRow | null): Promise<UserRow> {
  const sender = known ?? (await deps.directory.resolveUsers(deps.pool, actor.realm_id, [actor.user_id])).found[0];
  if (!sender) throw badRequest('Invalid sender');
  return sender;
}

/** The direct-message notification: recipients resolved as Zulip does (any bad one rejects the request). */
async function privateNotification(deps: MessagesDeps, actor: Actor, to: number[] | string[]): Promise<{ key: string; notify: (op: string) => ClientNotify }> {
  const ids = to.filter((x): x is number => typeof x === 'number');
  const emails = to.filter((x): x is string => typeof x === 'string');
  const resolved = await deps.directory.resolveUsers(deps.pool, actor.realm_id, [...new Set([...ids, actor.user_id]), ...emails], { deliveryEmails: true });
  const missing = resolved.missing[0];
  if (typeof missing === 'string') throw badRequest(`Invalid email '${missing}'`);
  if (missing !== undefined) throw badRequest(`Invalid user ID ${missing}`);
  const byId = new Map(resolved.found.map((u) => [u.id, u]));
  const sender = byId.get(actor.user_id) as UserRow;
  // In the order the client named them, then the sender (Zulip appends them).
  const fromEmails = resolved.found.filter((u) => !ids.includes(u.id) && u.id !== actor.user_id).map((u) => u.id);
  const ordered = [...new Set([...ids, ...fromEmails, actor.user_id])]
    .map((id) => byId.get(id))
    .filter((u): u is UserRow => u !== undefined);
  const recipients = ordered.map(typingUser);
  const notified = ordered.filter((u) => u.is_active).map((u) => u.id);
  const key = `${actor.realm_id}:${actor.user_id}:p:${ordered.map((u) => u.id).sort((a, b) => a - b).join(',')}`;
  return {
    key,
    notify: (op) => ({ realm_id: actor.realm_id, users: notified, event: { type: 'typing', op, message_type: 'private', sender: typingUser(sender), recipients } }),
  };
}

/** The stream notification, after Zulip's access_stream_by_id and access_stream_for_send_message checks. */
async function streamNotification(deps: MessagesDeps, actor: Actor, streamId: number, topic: string): Promise<{ key: string; notify: (op: string) => ClientNotify } | undefined> {
  const known = await readModelStore.sendContext(deps.pool, actor.realm_id, actor.user_id, { stream_id: streamId });
  const realm = known.realm && Directory.isCurrentFor(known.realm, actor) ? known.realm : await deps.directory.realmFor(actor);
  const sender = await senderRow(deps, actor, known.sender);
  let stream = known.stream ?? undefined;
  let subscriberIds = known.subscriber_ids;
  let subscribed = subscriberIds.includes(actor.user_id);
  // As for sends (send-message.ts): where a stale read model could leak to someone who lost
  // access, or refuse someone just subscribed, the subscriptions service decides.
  if (!stream || stream.invite_only || known.guest_subscribed || (isGuest(sender) && !subscribed)) {
    ({ stream, subscribed, subscriberIds } = await confirmStreamWithOwner(deps, actor.realm_id, actor.user_id, { stream_id: streamId }, known));
  }
  if (!stream || stream.is_archived) throw invalidChannelId();
  if ((stream.invite_only || isGuest(sender)) && !subscribed) throw invalidChannelId();
  checkPostPolicy(stream, sender, realm, new Date());
  if (subscriberIds.length > TYPING_TIMING.maxStreamSizeForTypingNotifications) return undefined;
  const others = subscriberIds.filter((id) => id !== actor.user_id);
  const notified = (await deps.directory.store.usersByIds(deps.pool, actor.realm_id, others)).filter((u) => u.is_active).map((u) => u.id);
  const id = stream.id;
  return {
    key: `${actor.realm_id}:${actor.user_id}:s:${id}:${topic}`,
    notify: (op) => ({ realm_id: actor.realm_id, users: notified, event: { type: 'typing', op, message_type: 'stream', sender: typingUser(sender), stream_id: id, topic } }),
  };
}

/** Checks a typing notification and sends it (see the file header). */
export async function checkSendTypingNotification(deps: MessagesDeps, expiry: TypingExpiry | undefined, r: TypingRequest): Promise<void> {
  const { actor } = r;
  let target: { key: string; notify: (op: string) => ClientNotify } | undefined;
  if (r.type === 'stream') {
    // Before feature level 215 the stream came as the only entry of `to`.
    let streamId = r.stream_id;
    if (streamId === undefined && r.to !== undefined) {
      if (r.to.length > 1) throw badRequest('Cannot send to multiple channels');
      const only = r.to[0];
      if (typeof only === 'number') streamId = only;
    }
    if (streamId === undefined) throw badRequest('Missing channel ID');
    if (r.topic === undefined) throw badRequest('Missing topic');
    if (!(await typingSettingsOf(deps, actor)).stream) throw badRequest('User has disabled typing notifications for channel messages');
    target = await streamNotification(deps, actor, streamId, r.topic);
  } else {
    if (r.to === undefined) throw badRequest("Missing 'to' argument");
    if (r.to.length === 0) throw badRequest("Empty 'to' list");
    if (!(await typingSettingsOf(deps, actor)).private) throw badRequest('User has disabled typing notifications for direct messages');
    target = await privateNotification(deps, actor, r.to);
  }
  if (!target) return;
  const notify = target.notify(r.op);
  if (notify.users.length > 0) await deps.bus.publish(eventsInbox.notify, notify, { msgId: randomUUID() });
  if (r.op === 'start') await expiry?.started(target.key, target.notify('stop'), Date.now() + deps.settings.typingStartedExpiryMs);
  else await expiry?.stopped(target.key);
}
