/**
 * Renders a message for its recipients: the HTML and what it contains (@zc/markdown), the
 * topic's links, and each recipient's content flags (lib/mention-flags.ts). Shared by sending
 * and editing, so an edit recomputes flags exactly as a send computes them.
 */
import { mayTranslateEmoticons } from '@zc/markdown';
import { users } from '@zc/shared/contracts';
import { realmSettings } from '@zc/shared/policy';
import type { MessagesDeps } from '../deps.js';
import { customEmojiCandidates } from '../lib/emoji.js';
import { contentFacts, contentFlagBits } from '../lib/mention-flags.js';
import { topicLinksOf, type Rendered, type TopicLink } from '../lib/render.js';
import { messageStore } from '../store/message-store.js';
import type { RealmRow } from '../store/read-model-store.js';
import { activeRealmEmojiByName } from './realm-emoji.js';
import { renderWithUploadPreviews } from './uploaded-images.js';
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

/**
 * Whether `content` renders with its emoticons translated: the sender's translate_emoticons
 * (Zulip renders with the sender's setting, on edits too). Asked of the users service, which
 * owns it, so a setting changed a moment ago counts (read-your-writes), and only for content
 * where the setting could change anything, which keeps the hop off most sends.
 */
async function translatesEmoticons(deps: MessagesDeps, realmId: number, senderId: number, content: string): Promise<boolean> {
  if (!mayTranslateEmoticons(content)) return false;
  try {
    const { users: found } = await deps.bus.request(users.userSettings, { realm_id: realmId, user_ids: [senderId] }, { timeoutMs: 3000 });
    return found[0]?.settings.translate_emoticons === true;
  } catch (err) {
    // Emoticons left as typed beat a failed send (Zulip's default is off).
    deps.log.warn({ err, realm_id: realmId, user_id: senderId }, 'users service did not answer translate_emoticons; rendering emoticons as typed');
    return false;
  }
}

export async function renderMessage(deps: MessagesDeps, realm: RealmRow, m: MessageToRender): Promise<RenderedMessage> {
  const [data, translateEmoticons, realmEmoji] = await Promise.all([
    deps.render.forRealm(realm.id),
    translatesEmoticons(deps, realm.id, m.senderId, m.content),
    activeRealmEmojiByName(deps, realm.id, customEmojiCandidates(m.content)),
  ]);
  const ctx = renderContextOf(data, realm, { alertWords: alertWordsOfUsers(data, m.recipientIds), translateEmoticons, realmEmoji });
  const rendered = await renderWithUploadPreviews(deps, realm.id, m.content, ctx);
  // @**topic** reaches those who posted in the topic, and the sender (Zulip's topic_participant_user_ids).
  const topicParticipants =
    rendered.mentions_topic_wildcard && m.streamId !== null
      ? [m.senderId, ...(await messageStore.topicParticipants(deps.pool, m.recipientId, m.topic))]
      : [];
  // Most messages mention no group: the realm's settings (defaults merged in) are not built for them.
  const groupMemberIds =
    rendered.mentioned_group_ids.length === 0 ? new Set<number>() : mentionedGroupMembers(data, rendered.mentioned_group_ids, realmSettings(realm.settings).waiting_period_threshold);
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
 * render_message_backend: the actor's emoticon setting; no recipients, so no one's alert
 * words; no length check).
 */
export async function renderPreview(deps: MessagesDeps, actor: { realm_id: number; user_id: number }, content: string): Promise<string> {
  const realm = await deps.directory.realmFor(actor);
  const [data, translateEmoticons, realmEmoji] = await Promise.all([
    deps.render.forRealm(realm.id),
    translatesEmoticons(deps, realm.id, actor.user_id, content),
    activeRealmEmojiByName(deps, realm.id, customEmojiCandidates(content)),
  ]);
  return (await renderWithUploadPreviews(deps, realm.id, content, renderContextOf(data, realm, { alertWords: [], translateEmoticons, realmEmoji }))).html;
}
