/**
 * Pure checks and normalisation of drafts (spec 2.7, Zulip's further_validated_draft_dict):
 * everything that can be decided without asking another service.
 */
import { LIMITS, type Draft, type DraftInput } from '@zc/shared/contracts';
import { badRequest } from '@zc/shared/errors';

/** A draft ready to store: recipients reduced to what the API shows back. */
export interface NormalisedDraft {
  type: '' | 'stream' | 'private';
  /** The stream id, or the other users of a direct message (the user alone for a self-DM). */
  to: number[];
  topic: string;
  content: string;
  lastEditTime: Date;
}

/** Zulip's truncate_content: keep the text within `max` characters, marking the cut. */
export function truncateText(text: string, max: number, marker: string): string {
  const chars = Array.from(text);
  if (chars.length <= max) return text;
  return chars.slice(0, max - marker.length).join('') + marker;
}

/** A stream draft's topic is cut to 60 characters, the last three being `...`. */
export const truncateTopic = (topic: string) => truncateText(topic, LIMITS.maxTopicLength, '...');

/** Zulip's normalize_body: trims trailing space and leading newlines, refuses empty or NUL. */
export function normaliseContent(content: string): string {
  const body = content.replace(/\s+$/u, '').replace(/^\n+/, '');
  if (body.length === 0) throw badRequest('Message must not be empty');
  if (body.includes('\u0000')) throw badRequest('Message must not contain null bytes');
  return truncateText(body, LIMITS.maxMessageLength, '\n[message truncated]');
}

/** The other participants of a direct-message draft, as Zulip's Draft.to_dict shows them. */
export function directRecipients(to: readonly number[], selfId: number): number[] {
  const unique = [...new Set(to)];
  const others = unique.filter((id) => id !== selfId).sort((a, b) => a - b);
  return others.length === 0 ? [selfId] : others;
}

/**
 * Validates and normalises one draft. `nowSeconds` fills a missing timestamp. Checks run in
 * Zulip's order, so a draft with several faults gets the same error as from Zulip.
 */
export function normaliseDraft(d: DraftInput, nowSeconds: number, selfId: number): NormalisedDraft {
  const content = normaliseContent(d.content);
  const timestamp = Math.round((d.timestamp ?? nowSeconds) * 1e6) / 1e6;
  // Not exactly invalid, but nothing a client should send (Zulip refuses it too).
  if (timestamp < 0) throw badRequest('Timestamp must not be negative.');
  const lastEditTime = new Date(timestamp * 1000);
  if (d.type === 'stream') {
    const topic = truncateTopic(d.topic);
    if (topic.includes('\u0000')) throw badRequest('Topic must not contain null bytes');
    if (d.to.length !== 1) throw badRequest('Must specify exactly 1 channel ID for channel messages');
    return { type: 'stream', to: [d.to[0] as number], topic, content, lastEditTime };
  }
  // Zulip ignores the topic of other drafts, and keeps a direct draft without recipients as unaddressed.
  if (d.type === 'private' && d.to.length > 0) {
    return { type: 'private', to: directRecipients(d.to, selfId), topic: '', content, lastEditTime };
  }
  return { type: '', to: [], topic: '', content, lastEditTime };
}

/** A stored draft as clients see it; the timestamp is whole seconds. */
export function toApiDraft(row: { id: number; type: string; to_ids: readonly number[]; topic: string; content: string; last_edit_time: Date }): Draft {
  return {
    id: row.id,
    type: row.type as Draft['type'],
    to: [...row.to_ids],
    topic: row.topic,
    content: row.content,
    timestamp: Math.floor(row.last_edit_time.getTime() / 1000),
  };
}
