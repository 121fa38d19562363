/**
 * An event's JSON text (an object, as the appender stored it) with the queue's event id put
 * first, without parsing it: `{"id":7,"type":"message",…}`. The client's parser sees the
 * same object `{id, ...event}` built, at a fraction of the cost.
 */
export function withId(id: number, json: string): string {
  return json.length > 2 ? `{"id":${id},${json.slice(1)}` : `{"id":${id}}`;
}
