/**
 * Who hears about a stream (Zulip's send_event recipients for stream and peer events): every
 * active user for a web-public stream, non-guests and subscribed guests for a public one,
 * and subscribers plus administrators for a private one.
 */
import type { RealmPeople } from '@zc/shared/directory';
import type { StreamPrivacy } from './policy.js';

export function streamAudience(stream: StreamPrivacy, subscribers: readonly number[], people: RealmPeople): number[] {
  const ids = new Set<number>(subscribers);
  const base = stream.invite_only ? people.admins : stream.is_web_public ? people.everyone : people.members;
  for (const id of base) ids.add(id);
  return [...ids].sort((a, b) => a - b);
}

/** The audience minus the users the change is about (they get their own add/remove event). */
export function peerRecipients(stream: StreamPrivacy, subscribers: readonly number[], people: RealmPeople, altered: readonly number[]): number[] {
  const skip = new Set(altered);
  return streamAudience(stream, subscribers, people).filter((id) => !skip.has(id));
}
