/**
 * Renders a message for its recipients: the HTML and what it contains (@zc/markdown), the
 * topic's links, and each recipient's content flags (lib/mention-flags.ts). Shared by sending
 * and editing, so an edit recomputes flags exactly as a send computes them.
 */
import { realmSettings } from '@zc/shared/policy';
import type { MessagesDeps } from '../deps.js';
import { contentFacts, contentFlagBits } from '../lib/mention-flags.js';
import { renderContent, topicLinksOf, type Rendered, type TopicLink } from '../lib/render.js';
import { messageStore } from '../store/message-store.js';
import type { RealmRow } from '../store/read-model-store.js';
import { alertWordsOfUsers, mentionedGroupMembers, renderContextOf } from './render-context.js';

export interface MessageToRender {
  content: string;
  senderId: number;
  /** null for direct messages. */
  streamId: number | null;
  recipientId: number;
  topic: string;
  /** Everyone who gets the message (their alert words are looked for). */
  recipientIds: readonly number[];
}

export interface RenderedMessage {
  rendered: Rendered;
  topicLinks: TopicLink[];
  /** The mentioned / wildcard_mentioned / has_alert_word bits of one recipient. */
  contentFlags(userId: number): number;
}

export async function renderMessage(deps: MessagesDeps, realm: RealmRow, m: MessageToRender): Promise<RenderedMessage> {
  const data = await deps.render.forRealm(realm.id);
  const ctx = renderContextOf(data, realm, {
    alertWords: alertWordsOfUsers(data, m.recipientIds),
    // TODO(issue-5): the sender's translate_emoticons setting once the users service publishes
    // user settings; Zulip's default is off.
    translateEmoticons: false,
  });
  const rendered = renderContent(m.content, ctx);
  // @**topic** reaches those who posted in the topic, and the sender (Zulip's topic_participant_user_ids).
  const topicParticipants =
    rendered.mentions_topic_wildcard && m.streamId !== null
      ? [m.senderId, ...(await messageStore.topicParticipants(deps.pool, m.recipientId, m.topic))]
      : [];
  const groupMemberIds = mentionedGroupMembers(data, rendered.mentioned_group_ids, realmSettings(realm.settings).waiting_period_threshold);
  const facts = contentFacts(rendered, { topicParticipants, alertWordsOf: (id) => data.alertWords.get(id), groupMemberIds });
  return {
    rendered,
    topicLinks: m.streamId === null ? [] : topicLinksOf(m.topic, data.linkifiers),
    contentFlags: (userId) => contentFlagBits(userId, facts),
  };
}

/** The topic links of a realm's topics, for shaping stored messages (memoised per topic within one call). */
export async function topicLinker(deps: MessagesDeps, realmId: number): Promise<(topic: string) => TopicLink[]> {
  const { linkifiers } = await deps.render.forRealm(realmId);
  const seen = new Map<string, TopicLink[]>();
  return (topic) => {
    let links = seen.get(topic);
    if (!links) {
      links = topicLinksOf(topic, linkifiers);
      seen.set(topic, links);
    }
    return links;
  };
}

/**
 * POST /messages/render: `content` as it would render if the actor sent it now (Zulip's
 * render_message_backend: no recipients, so no one's alert words; no length check).
 */
export async function renderPreview(deps: MessagesDeps, actor: { realm_id: number; user_id: number }, content: string): Promise<string> {
  const realm = await deps.directory.ensureRealm(actor.realm_id);
  const data = await deps.render.forRealm(realm.id);
  return renderContent(content, renderContextOf(data, realm, { alertWords: [], translateEmoticons: false })).html;
}
