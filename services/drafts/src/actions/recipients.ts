/**
 * Checks that need other services: a stream draft's stream must exist and be accessible, a
 * direct draft's users must exist in the realm (Zulip's access_stream_by_id and
 * get_user_profiles_by_ids). Asked over NATS; the owners' answers are authoritative.
 */
import { isGuest, subscriptionsRpc, users, type Actor } from '@zc/shared/contracts';
import { badRequest } from '@zc/shared/errors';
import type { DraftsDeps } from '../deps.js';
import type { NormalisedDraft } from '../lib/draft-rules.js';

export const invalidChannelId = () => badRequest('Invalid channel ID');
export const invalidUserId = (id: number) => badRequest(`Invalid user ID ${id}`);

async function assertStreamAccessible(deps: DraftsDeps, actor: Actor, streamId: number): Promise<void> {
  const { stream, subscribed } = await deps.bus.request(subscriptionsRpc.streamAccess, {
    realm_id: actor.realm_id,
    user_id: actor.user_id,
    stream: { stream_id: streamId },
  });
  // A private stream is visible to its subscribers; a guest sees only streams it is subscribed to.
  const visible = stream !== null && stream.realm_id === actor.realm_id && (subscribed || (!stream.invite_only && !isGuest(actor)));
  if (!visible) throw invalidChannelId();
}

/** Throws the first recipient problem among `drafts`, asking each owner once per distinct id. */
export async function assertRecipientsValid(deps: DraftsDeps, actor: Actor, drafts: readonly NormalisedDraft[]): Promise<void> {
  const streamIds = new Set<number>();
  const userIds = new Set<number>();
  for (const d of drafts) {
    if (d.type === 'stream') streamIds.add(d.to[0] as number);
    if (d.type === 'private') for (const id of d.to) userIds.add(id);
  }
  if (userIds.size > 0) {
    const { missing_ids } = await deps.bus.request(users.resolve, { realm_id: actor.realm_id, user_ids: [...userIds], emails: [] });
    if (missing_ids.length > 0) throw invalidUserId(Math.min(...missing_ids));
  }
  for (const id of streamIds) await assertStreamAccessible(deps, actor, id);
}
