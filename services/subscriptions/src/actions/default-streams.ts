/**
 * POST and DELETE /default_streams (Zulip's add_default_stream and remove_default_stream): an
 * administrator chooses the streams every new user of the realm joins. Each change sends the
 * realm's whole list (`default_streams`) to its active non-guest users, who see it in
 * /register's `realm_default_streams`.
 */
import type { Actor } from '@zc/shared/contracts';
import { transaction, type Queryable } from '@zc/shared/db';
import { badRequest, organizationAdministratorRequired } from '@zc/shared/errors';
import { canAdministerStreams } from '@zc/shared/policy';
import type { SubscriptionsDeps } from '../deps.js';
import { invalidStreamId } from '../lib/errors.js';
import { isoDay, toApiStream } from '../lib/stream-view.js';
import { streamStatsStore } from '../store/stream-stats-store.js';
import { streamStore } from '../store/stream-store.js';
import { realmFor } from './directory.js';
import { notifyUsers } from './outbox.js';
import { streamForAdministration } from './update-stream.js';

interface DefaultStreamRequest {
  actor: Actor;
  stream_id: number;
}

/** Zulip's require_realm_admin comes before any look at the stream. */
async function administeredStream(deps: SubscriptionsDeps, r: DefaultStreamRequest) {
  if (!canAdministerStreams(r.actor)) throw organizationAdministratorRequired();
  await realmFor(deps, r.actor);
  return streamForAdministration(deps.pool, r.actor, r.stream_id);
}

export async function checkAddDefaultStream(deps: SubscriptionsDeps, r: DefaultStreamRequest): Promise<Record<string, never>> {
  const { stream, subscribed } = await administeredStream(deps, r);
  // Zulip reaches the stream as its content is reached (access_stream_by_id): a private stream
  // the administrator is not in stays hidden; one they are in is refused as a default.
  if (stream.invite_only && !subscribed) throw invalidStreamId();
  await transaction(deps.pool, async (tx) => {
    // Locked, so a concurrent PATCH cannot make it private between the check and the insert.
    const locked = await streamStore.lockById(tx, r.actor.realm_id, stream.id);
    if (!locked) throw invalidStreamId();
    if (locked.invite_only) throw badRequest('Private channels cannot be made default.');
    if (await streamStore.addDefaultStream(tx, locked.realm_id, locked.id)) await notifyDefaultStreams(deps, tx, locked.realm_id);
  });
  return {};
}

export async function checkRemoveDefaultStream(deps: SubscriptionsDeps, r: DefaultStreamRequest): Promise<Record<string, never>> {
  // Administrators may name any stream here, private ones included (allow_realm_admin).
  const { stream } = await administeredStream(deps, r);
  await transaction(deps.pool, async (tx) => {
    await streamStore.removeDefaultStream(tx, stream.realm_id, stream.id);
    // Zulip answers success and sends the list even when the stream was not a default one.
    await notifyDefaultStreams(deps, tx, stream.realm_id);
  });
  return {};
}

/** The realm's default streams as /register's realm_default_streams shows them. */
export async function defaultStreamObjects(q: Queryable, realmId: number): Promise<Array<Record<string, unknown>>> {
  const streams = await streamStore.listByIds(q, realmId, await streamStore.listDefaultStreamIds(q, realmId));
  const stats = await streamStatsStore.statsFor(q, streams.map((s) => s.id), isoDay());
  return streams.map((s) => toApiStream(s, stats.get(s.id)));
}

/** Zulip's notify_default_streams: the whole list, to the realm's active non-guest users (bots too). */
export async function notifyDefaultStreams(deps: SubscriptionsDeps, tx: Queryable, realmId: number): Promise<void> {
  const people = await deps.directory.realmPeople(tx, realmId);
  await notifyUsers(tx, realmId, people.members, { type: 'default_streams', default_streams: await defaultStreamObjects(tx, realmId) });
}
