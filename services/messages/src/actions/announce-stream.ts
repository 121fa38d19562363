/**
 * The notification bot's "new stream" announcement (Zulip's "new streams" topic): when the
 * subscriptions service reports a stream created with `announce`, the realm's notification
 * bot posts to the realm's notifications stream (`notifications_stream_id`; a new realm's
 * "general"), if the realm has one and it still exists, as Zulip's get_notifications_stream.
 */
import { users, type StreamAnnouncement } from '@zc/shared/contracts';
import { realmSettings } from '@zc/shared/policy';
import type { MessagesDeps } from '../deps.js';
import { streamAccessFor } from './read-model.js';
import { sendAsSystemBot } from './notification-bot.js';
import type { SendWriter } from './send-writer.js';

export const ANNOUNCEMENT_TOPIC = 'new streams';

/** Posts the announcement once (redelivered events hit the idempotency key); skips with a log line when there is no bot or no notifications stream. */
export async function doAnnounceStream(deps: MessagesDeps, writer: SendWriter, e: StreamAnnouncement): Promise<void> {
  // The setting as its owner has it now: the directory copy may not have heard of a change yet.
  const { realm } = await deps.bus.request(users.realm, { realm_id: e.realm_id });
  const streamId = realmSettings(realm.settings).notifications_stream_id;
  if (streamId === -1) {
    deps.log.info({ realm_id: e.realm_id }, 'no notifications stream; stream announcement skipped');
    return;
  }
  const botEmail = `notification-bot@${new URL(realm.url).hostname}`;
  const found = await deps.bus.request(users.resolve, { realm_id: e.realm_id, user_ids: [e.creator_id], emails: [botEmail] });
  const bot = found.users.find((u) => u.email.toLowerCase() === botEmail || u.delivery_email.toLowerCase() === botEmail);
  if (!bot) {
    deps.log.warn({ realm_id: e.realm_id, email: botEmail }, 'no notification bot; stream announcement skipped');
    return;
  }
  const target = await streamAccessFor(deps, e.realm_id, bot.user_id, { stream_id: streamId });
  if (!target.stream) {
    deps.log.info({ realm_id: e.realm_id, stream_id: streamId }, 'notifications stream gone; stream announcement skipped');
    return;
  }
  // The stream's creation event and this announcement reach this replica apart: its mention must link either way.
  if (!e.invite_only) await deps.render.knowStream(e.realm_id, { id: e.stream_id, name: e.stream_name });
  const creator = found.users.find((u) => u.user_id === e.creator_id);
  const who = creator ? `@_**${creator.full_name}|${creator.user_id}**` : 'Someone';
  await sendAsSystemBot(deps, writer, e.realm_id, bot, {
    type: 'stream',
    to: target.stream.id,
    topic: ANNOUNCEMENT_TOPIC,
    content: `${who} created a new stream #**${e.stream_name}**.`,
    // Zulip's send_messages_for_new_subscribers sends it with mark_as_read=[creator]: no unread news of one's own act.
    read_by: [e.creator_id],
    idempotency_key: `stream-announced:${e.stream_id}`,
  });
}
