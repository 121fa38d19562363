/** Helpers of the default-streams tests: subscriptions made from events arrive a moment later. */
import type { ApiClient } from '../client.js';
import type { Account, System } from '../harness.js';

type Json = Record<string, unknown>;

export const subscribedNames = async (c: ApiClient): Promise<string[]> =>
  ((await c.get('/users/me/subscriptions')).body.subscriptions as Json[]).map((s) => s.name as string).sort();

/** The user's subscriptions once they include `name` (the subscriptions service joins them from the users' events), or after 3 s. */
export async function subscriptionsOnceIn(c: ApiClient, name: string): Promise<string[]> {
  for (let i = 0; i < 60; i++) {
    const names = await subscribedNames(c);
    if (names.includes(name)) return names;
    await new Promise((r) => setTimeout(r, 50));
  }
  return subscribedNames(c);
}

/** The id of a stream `who` (default: hamlet, who makes most of them) can see. */
export async function streamId(sys: System, name: string, who: Account = sys.people.hamlet): Promise<number> {
  return (await sys.client(who).get('/get_stream_id', { stream: name })).body.stream_id as number;
}
