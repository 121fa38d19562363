// The flags a message's content gives each recipient (spec 2.9), as Zulip's
// create_user_messages sets them: `mentioned` for direct (non-silent) mentions and, once user
// groups exist, group mentions; `wildcard_mentioned` for the stream wildcards (@**all**,
// @**everyone**, @**stream**, @**channel**: everyone) and @**topic** (only the topic's
// participants); `has_alert_word` when one of that recipient's own alert words is in the
// message. Pure; used when a message is sent and again when its content is edited.
// (A line comment: the mention syntax would end a block comment.)
import { FLAG_BITS } from './flags.js';
import type { Rendered } from './render.js';

/** The bits this module decides; an edit clears them before setting the new ones. */
export const CONTENT_FLAG_MASK = FLAG_BITS.mentioned | FLAG_BITS.wildcard_mentioned | FLAG_BITS.has_alert_word;

export interface ContentFacts {
  mentionedUserIds: ReadonlySet<number>;
  streamWildcard: boolean;
  topicWildcard: boolean;
  /** Users who took part in the topic (for @**topic**); only read when topicWildcard. */
  topicParticipants: ReadonlySet<number>;
  /** Alert words found in the message, lower-cased (the renderer's alert_words_found). */
  alertWordsFound: ReadonlySet<string>;
  /** Each user's alert words (users without any are absent). */
  alertWordsOf: (userId: number) => readonly string[] | undefined;
}

/** What the rendered message says, plus the lookups flags need. */
export function contentFacts(
  rendered: Pick<Rendered, 'mentioned_user_ids' | 'mentions_stream_wildcard' | 'mentions_topic_wildcard' | 'alert_words_found'>,
  extra: { topicParticipants?: Iterable<number>; alertWordsOf: (userId: number) => readonly string[] | undefined; groupMemberIds?: Iterable<number> },
): ContentFacts {
  return {
    mentionedUserIds: new Set([...rendered.mentioned_user_ids, ...(extra.groupMemberIds ?? [])]),
    streamWildcard: rendered.mentions_stream_wildcard,
    topicWildcard: rendered.mentions_topic_wildcard,
    topicParticipants: new Set(extra.topicParticipants ?? []),
    alertWordsFound: new Set(rendered.alert_words_found.map((w) => w.toLowerCase())),
    alertWordsOf: extra.alertWordsOf,
  };
}

/** The content-derived flag bits of one recipient. */
export function contentFlagBits(userId: number, f: ContentFacts): number {
  let bits = 0;
  if (f.mentionedUserIds.has(userId)) bits |= FLAG_BITS.mentioned;
  if (f.streamWildcard || (f.topicWildcard && f.topicParticipants.has(userId))) bits |= FLAG_BITS.wildcard_mentioned;
  if (f.alertWordsFound.size > 0) {
    const words = f.alertWordsOf(userId);
    if (words?.some((w) => f.alertWordsFound.has(w.toLowerCase()))) bits |= FLAG_BITS.has_alert_word;
  }
  return bits;
}
