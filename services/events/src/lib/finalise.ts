/**
 * The per-queue form of a client event (Zulip's process_message_event and friends): the
 * message as the queue's apply_markdown/client_gravatar want it, the recipient's flags, and
 * local_message_id for the queue that sent the message. Pure.
 */
import { finaliseMessageForQueue, withInheritedNotificationSettings, type ClientNotify } from '@zc/shared/contracts';

export interface QueueView {
  queueId: string;
  applyMarkdown: boolean;
  clientGravatar: boolean;
  /** The client takes null ("inherit the user's default") in stream notification settings. */
  notificationSettingsNull?: boolean;
}

/** Sets the value at a dotted path to null, copying the objects on the way. */
function nullAt(obj: Record<string, unknown>, path: readonly string[]): Record<string, unknown> {
  const [head, ...rest] = path;
  if (head === undefined || !(head in obj)) return obj;
  if (rest.length === 0) return { ...obj, [head]: null };
  const inner = obj[head];
  if (!inner || typeof inner !== 'object' || Array.isArray(inner)) return obj;
  return { ...obj, [head]: nullAt(inner as Record<string, unknown>, rest) };
}

/** The event this queue stores; `flags` are the recipient's (undefined for a plain user id). */
export function finaliseForQueue(n: ClientNotify, q: QueueView, flags: readonly string[] | undefined): Record<string, unknown> {
  let event: Record<string, unknown> = { ...n.event };
  if (event.type === 'message') {
    event.message = finaliseMessageForQueue(event.message as Record<string, unknown>, {
      apply_markdown: q.applyMarkdown,
      client_gravatar: q.clientGravatar,
    });
    event.flags = [...(flags ?? [])];
    // Only the very queue that sent the message learns its local id (not the user's other queues).
    if (n.sender_queue_id === q.queueId && n.local_id !== undefined) event.local_message_id = n.local_id;
  } else if (flags !== undefined) {
    event.flags = [...flags];
  }
  if (event.type === 'subscription' && event.op === 'add' && !q.notificationSettingsNull) {
    // As /register gives such clients: inherited (null) settings replaced by their defaults.
    const subs = event.subscriptions;
    if (Array.isArray(subs)) event = { ...event, subscriptions: subs.map((x) => withInheritedNotificationSettings(x as Record<string, unknown>)) };
  }
  if (q.clientGravatar) {
    for (const path of n.gravatar_fields ?? []) event = nullAt(event, path.split('.'));
  }
  return event;
}

/**
 * Zulip's process_deletion_event: a queue without the `bulk_message_deletion` capability gets
 * a `delete_message` event as one event per message, each with `message_id` in place of
 * `message_ids`. Every other event stays one event.
 */
export function splitForQueue(event: Record<string, unknown>, bulkMessageDeletion: boolean): Array<Record<string, unknown>> {
  if (event.type !== 'delete_message' || bulkMessageDeletion || !Array.isArray(event.message_ids)) return [event];
  const { message_ids: ids, ...rest } = event;
  return (ids as unknown[]).map((id) => ({ ...rest, message_id: id }));
}
