/**
 * What a send reads from the read models (realm, sender, target stream and its subscribers),
 * kept in memory per replica so that a send usually needs no query before its write.
 *
 * Why this is safe although another replica's consumer may change the read models at any
 * time: every entry belongs to the realm's read-model version it was read with (one query
 * returns the rows and the version from the same snapshot, store/read-model-store.ts
 * `sendContext`), every send carries that version to the writer, and the writer's statement
 * commits only if the realm's version is still the same (store/message-store.ts
 * `insertSends`). A send checked against data that has changed since is therefore never
 * written: it fails with `StaleSendContext` and is checked again against fresh rows. Nothing
 * here depends on hearing events, so it holds with any number of replicas.
 *
 * Only hits are cached (a missing stream, user or realm goes to the slower paths that ask
 * the owners every time), and an entry read at an older version than the realm's newest
 * known one is never kept.
 */
import type { Pool } from '@zc/shared/db';
import type { StreamTarget } from '../lib/message-input.js';
import { readModelStore, type RealmRow, type SenderRow, type SendContextRow, type StreamRow } from '../store/read-model-store.js';

/** The read models changed between a send's checks and its write; check it again. */
export class StaleSendContext extends Error {
  constructor(readonly version: number) {
    super('the read models changed while the send was being checked');
  }
}

interface StreamEntry {
  stream: StreamRow;
  subscriberIds: number[];
  guestSubscribed: boolean;
}

interface RealmEntry {
  version: number;
  realm: RealmRow;
  users: Map<number, SenderRow>;
  streams: Map<number, StreamEntry>;
  /** A name as a send gave it → the stream the read model matched it to (its case rules, not ours). */
  streamIds: Map<string, number>;
}

export interface SendContextLimits {
  /** Realms kept at most (the least recently filled go first). */
  realms: number;
  /** Users and streams kept per realm at most. */
  usersPerRealm: number;
  streamsPerRealm: number;
}

const DEFAULT_LIMITS: SendContextLimits = { realms: 1000, usersPerRealm: 20_000, streamsPerRealm: 2000 };

/** Deletes the oldest entries of a Map (insertion order) beyond `max`. */
function trim<K, V>(m: Map<K, V>, max: number): void {
  for (const k of m.keys()) {
    if (m.size <= max) return;
    m.delete(k);
  }
}

export class SendContextCache {
  private readonly realms = new Map<number, RealmEntry>();

  constructor(
    private readonly pool: Pool,
    private readonly limits: SendContextLimits = DEFAULT_LIMITS,
  ) {}

  /**
   * The send's view of the read models: from memory when every part is known, else read in
   * one query (and remembered). `fresh` skips memory (a retry after `StaleSendContext`).
   */
  async get(realmId: number, senderId: number, target: StreamTarget | null, opts: { fresh?: boolean } = {}): Promise<SendContextRow> {
    if (!opts.fresh) {
      const hit = this.lookup(realmId, senderId, target);
      if (hit) return hit;
    }
    const row = await readModelStore.sendContext(this.pool, realmId, senderId, target);
    this.remember(realmId, row, target);
    return row;
  }

  /** A write saw the realm at `version`: forget everything read at an older one. */
  sawVersion(realmId: number, version: number): void {
    const e = this.realms.get(realmId);
    if (e && e.version < version) this.realms.delete(realmId);
  }

  private lookup(realmId: number, senderId: number, target: StreamTarget | null): SendContextRow | undefined {
    const e = this.realms.get(realmId);
    const sender = e?.users.get(senderId);
    if (!e || !sender) return undefined;
    if (target === null) return { realm: e.realm, sender, stream: null, subscriber_ids: [], guest_subscribed: false, version: e.version };
    const id = 'stream_id' in target ? target.stream_id : e.streamIds.get(target.name);
    const s = id === undefined ? undefined : e.streams.get(id);
    if (!s) return undefined;
    return { realm: e.realm, sender, stream: s.stream, subscriber_ids: s.subscriberIds, guest_subscribed: s.guestSubscribed, version: e.version };
  }

  private remember(realmId: number, row: SendContextRow, target: StreamTarget | null): void {
    if (!row.realm || !row.sender) return;
    let e = this.realms.get(realmId);
    if (e && e.version > row.version) return;
    if (!e || e.version < row.version) {
      e = { version: row.version, realm: row.realm, users: new Map(), streams: new Map(), streamIds: new Map() };
      this.realms.delete(realmId);
      this.realms.set(realmId, e);
      trim(this.realms, this.limits.realms);
    }
    e.users.set(row.sender.id, row.sender);
    trim(e.users, this.limits.usersPerRealm);
    if (row.stream) {
      const s = row.stream;
      e.streams.set(s.id, { stream: s, subscriberIds: row.subscriber_ids, guestSubscribed: row.guest_subscribed });
      if (target && 'name' in target) {
        e.streamIds.set(target.name, s.id);
        trim(e.streamIds, 2 * this.limits.streamsPerRealm);
      }
      if (e.streams.size > this.limits.streamsPerRealm) {
        trim(e.streams, this.limits.streamsPerRealm);
        for (const [name, id] of e.streamIds) if (!e.streams.has(id)) e.streamIds.delete(name);
      }
    }
  }
}
