/**
 * Widgets (`/poll`, `/todo`) as Zulip 6.2 makes them (zerver/lib/widget.py): a message whose
 * content starts with the command gets a first submessage, sent by its sender, holding
 * `{widget_type, extra_data}`; readers then add submessages (votes, options, tasks) that
 * clients fold over it. We do not store that first submessage: it is a function of the
 * message's original content, sender and id (an edit never changes a widget, as on Zulip),
 * so it is built wherever a message is shown and carries the message's own id, which sorts
 * it before every later submessage (those draw their ids from the message id sequence).
 */
import { badRequest } from '@zc/shared/errors';
import type { EditHistoryEntry } from '@zc/shared/contracts';

export type WidgetType = 'poll' | 'todo';

export interface Widget {
  widget_type: WidgetType;
  extra_data: { question: string; options: string[] } | null;
}

/** A submessage as the Message object and the `submessage` event show it. */
export interface Submessage {
  id: number;
  message_id: number;
  sender_id: number;
  msg_type: string;
  content: string;
}

const WIDGET_TYPES: readonly string[] = ['poll', 'todo'];

/** The widget a message's content asks for, or null (Zulip's get_widget_data). */
export function widgetOf(content: string): Widget | null {
  const first = content.split(/\s+/)[0] ?? '';
  if (!first.startsWith('/')) return null;
  const type = first.slice(1);
  if (!WIDGET_TYPES.includes(type)) return null;
  const rest = content.replace(first, '');
  if (type === 'todo') return { widget_type: 'todo', extra_data: null };
  const lines = rest.split(/\r\n|\r|\n/);
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  let question = '';
  if (lines.length > 0 && lines[0] !== '') question = (lines.shift() as string).trim();
  // "- option" and "* option" are list syntax, not part of the option.
  const options = lines.map((l) => l.trim().replace(/^\s*[-*]?\s*/, '')).filter((o) => o.length > 0);
  return { widget_type: 'poll', extra_data: { question, options } };
}

/** The content the message was sent with: edits keep the first in the oldest history entry. */
export function originalContent(m: { content: string; edit_history?: readonly EditHistoryEntry[] | null }): string {
  const history = m.edit_history ?? [];
  for (let i = history.length - 1; i >= 0; i--) {
    const prev = history[i]?.prev_content;
    if (prev !== undefined) return prev;
  }
  return m.content;
}

/** The widget's own submessage for a message, or null when its original content made none. */
export function widgetSubmessage(m: { id: number; sender_id: number; content: string; edit_history?: readonly EditHistoryEntry[] | null }): Submessage | null {
  const widget = widgetOf(originalContent(m));
  if (!widget) return null;
  return { id: m.id, message_id: m.id, sender_id: m.sender_id, msg_type: 'widget', content: JSON.stringify(widget) };
}

type Field = 'string' | 'integer' | 'boolean';

/** Zulip's check_dict_only over a submessage's data: exactly these keys, of these types. */
function checkShape(what: string, data: Record<string, unknown>, fields: Record<string, Field>): void {
  for (const [key, kind] of Object.entries(fields)) {
    if (!(key in data)) throw badRequest(`${key} key is missing from ${what}`);
    const v = data[key];
    const ok = kind === 'string' ? typeof v === 'string' : kind === 'integer' ? Number.isInteger(v) : typeof v === 'boolean';
    if (!ok) throw badRequest(`${what}["${key}"] is not ${kind === 'integer' ? 'an integer' : `a ${kind}`}`);
  }
  const extra = Object.keys(data).filter((k) => !(k in fields));
  if (extra.length > 0) throw badRequest(`Unexpected arguments: ${extra.join(', ')}`);
}

/** The data's `type`, after checking it is an object with a string `type`. */
function typeOf(what: string, data: unknown): string {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw badRequest(`${what} is not a dict`);
  const type = (data as Record<string, unknown>).type;
  if (type === undefined) throw badRequest(`type key is missing from ${what}`);
  if (typeof type !== 'string') throw badRequest(`${what}["type"] is not a string`);
  return type;
}

/**
 * Checks a submessage's data against the message's widget, as Zulip's validate_poll_data and
 * validate_todo_data: only the poll's author may change its question.
 */
export function checkWidgetData(widgetType: WidgetType | undefined, data: unknown, isWidgetAuthor: boolean): void {
  if (widgetType === 'poll') {
    const what = 'poll data';
    const type = typeOf(what, data);
    const d = data as Record<string, unknown>;
    if (type === 'vote') return checkShape(what, d, { type: 'string', key: 'string', vote: 'integer' });
    if (type === 'question') {
      if (!isWidgetAuthor) throw badRequest("You can't edit a question unless you are the author.");
      return checkShape(what, d, { type: 'string', question: 'string' });
    }
    if (type === 'new_option') return checkShape(what, d, { type: 'string', option: 'string', idx: 'integer' });
    throw badRequest(`Unknown type for poll data: ${type}`);
  }
  if (widgetType === 'todo') {
    const what = 'todo data';
    const type = typeOf(what, data);
    const d = data as Record<string, unknown>;
    if (type === 'new_task') return checkShape(what, d, { type: 'string', key: 'integer', task: 'string', desc: 'string', completed: 'boolean' });
    if (type === 'strike') return checkShape(what, d, { type: 'string', key: 'string' });
    throw badRequest(`Unknown type for todo data: ${type}`);
  }
}
