/**
 * The narrow of an event queue (/register's `narrow`): which message events it gets. Zulip
 * supports only a few operators here (narrow_predicate.py: channel/stream, topic, sender, is)
 * and compares names case-insensitively; other message properties are not filtered.
 */
import type { EventsNarrowTerm } from '@zc/shared/contracts';
import { badRequest } from '@zc/shared/errors';

export interface NarrowTerm {
  operator: 'stream' | 'topic' | 'sender' | 'is';
  operand: string;
}

const OPERATOR_ALIASES: Record<string, NarrowTerm['operator']> = {
  stream: 'stream',
  channel: 'stream',
  topic: 'topic',
  subject: 'topic',
  sender: 'sender',
  is: 'is',
};

/**
 * The narrow is stored with the queue and tested against every message event it could get:
 * its size is bounded like a message search's (messages' NARROW_LIMITS).
 */
export const EVENTS_NARROW_LIMITS = { terms: 20, operandLength: 1000 } as const;

/** Normalises the terms; an operator Zulip cannot filter events by is refused, as Zulip does. */
export function parseEventsNarrow(terms: readonly EventsNarrowTerm[]): NarrowTerm[] {
  if (terms.length > EVENTS_NARROW_LIMITS.terms) throw badRequest(`Invalid narrow: at most ${EVENTS_NARROW_LIMITS.terms} operators.`);
  return terms.map((t) => {
    const [operator, operand] = Array.isArray(t) ? [t[0] as string, t[1] as string] : [t.operator, String(t.operand)];
    const op = OPERATOR_ALIASES[operator];
    if (!op) throw badRequest(`Operator ${operator} not supported.`);
    if (String(operand).length > EVENTS_NARROW_LIMITS.operandLength) throw badRequest(`Invalid narrow: operand of ${operator} longer than ${EVENTS_NARROW_LIMITS.operandLength} characters.`);
    return { operator: op, operand };
  });
}

const lower = (v: unknown) => String(v ?? '').toLowerCase();

/** Whether a message event (its message and the recipient's flags) passes every term. */
export function messageMatchesNarrow(narrow: readonly NarrowTerm[], message: Record<string, unknown>, flags: readonly string[]): boolean {
  for (const term of narrow) {
    switch (term.operator) {
      case 'stream':
        if (message.type !== 'stream') return false;
        // Stream ids are accepted as operands too (spec 2.8).
        if (lower(term.operand) !== lower(message.display_recipient) && term.operand !== String(message.stream_id)) return false;
        break;
      case 'topic':
        if (message.type !== 'stream' || lower(term.operand) !== lower(message.subject ?? message.topic)) return false;
        break;
      case 'sender':
        if (lower(term.operand) !== lower(message.sender_email) && term.operand !== String(message.sender_id)) return false;
        break;
      case 'is':
        if (!matchesIs(term.operand, message, flags)) return false;
        break;
    }
  }
  return true;
}

function matchesIs(operand: string, message: Record<string, unknown>, flags: readonly string[]): boolean {
  switch (operand) {
    case 'dm':
    case 'private':
      return message.type === 'private';
    case 'starred':
      return flags.includes('starred');
    case 'mentioned':
      return flags.includes('mentioned');
    case 'alerted':
      return flags.includes('has_alert_word');
    case 'unread':
      return !flags.includes('read');
    default:
      // Zulip lets other `is:` operands through unfiltered.
      return true;
  }
}
