/**
 * Which events a queue gets (Zulip's ClientDescriptor.accepts_event), as data: the queue's
 * event_types, then per-type rules. Heartbeats never come this way (the poll adds them).
 */
import { messageMatchesNarrow, type NarrowTerm } from './narrow.js';

export interface QueueFilterSettings {
  eventTypes: readonly string[] | null;
  narrow: readonly NarrowTerm[];
  capabilities: Readonly<Record<string, boolean>>;
}

type Rule = (q: QueueFilterSettings, event: Record<string, unknown>, flags: readonly string[]) => boolean;

/** Per-type rules after the event_types check; a type without a rule is accepted. */
const TYPE_RULES: Record<string, Rule> = {
  message: (q, e, flags) => messageMatchesNarrow(q.narrow, e.message as Record<string, unknown>, flags),
  // A client that asked for user_topic gets muted_topics data only from older servers.
  muted_topics: (q) => !(q.eventTypes?.includes('user_topic') ?? false),
  // Stream typing notifications need the capability, for older clients' sake.
  typing: (q, e) => !('stream_id' in e) || q.capabilities.stream_typing_notifications === true,
  // Clients with user_settings_object get user_settings events instead of the legacy ones.
  update_display_settings: (q) => q.capabilities.user_settings_object !== true,
  update_global_notifications: (q) => q.capabilities.user_settings_object !== true,
};

export function queueAccepts(q: QueueFilterSettings, event: Record<string, unknown>, flags: readonly string[]): boolean {
  const type = String(event.type);
  if (q.eventTypes !== null && !q.eventTypes.includes(type)) return false;
  const rule = TYPE_RULES[type];
  return rule ? rule(q, event, flags) : true;
}
