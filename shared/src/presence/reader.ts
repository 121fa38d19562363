/**
 * A process's copy of realms' presence, kept current by asking the store only for the entries
 * updated since the copy's seq (store.readSince). A 1,000-person realm's fetch then costs one
 * small Redis reply and a walk over the copy instead of 2,000 bulk replies to parse; a client's
 * `last_update_id` fetch (every minute) reads the few entries that changed.
 */
import type { PingOutcome, PingRequest, PresenceEntry, PresenceStore, ReadSince } from './store.js';

interface Copy {
  base: string;
  seq: number;
  entries: Map<number, PresenceEntry>;
  /** Bumped whenever an entry is replaced: what is derived from the copy is good while it stays (modern-blocks.ts). */
  revision: number;
}

/** The realm's visible entries as of the read (a live view: use before the next await). */
export type RealmView =
  | { disabled: true }
  | {
      disabled: false;
      entries: Iterable<PresenceEntry>;
      /** The realm's people token, read with the entries (legacy.ts). */
      peopleToken: string;
      /** The copy the entries come from, as a key for what is derived from them (modern-blocks.ts): dropped with it. */
      copy: object;
      /** The copy's revision: the same copy at the same revision holds the same entry objects. */
      revision: number;
    };

export class PresenceReader {
  private readonly copies = new Map<number, Copy>();

  constructor(
    private readonly store: PresenceStore,
    /**
     * Entries kept at most over all realms (~100 bytes each): past it the least recently read
     * realms are dropped (the one just read is always kept).
     */
    private readonly maxEntries = 200_000,
  ) {}

  /**
   * Whole reads of realms held by no copy, in flight. Requests that find no copy wait for the
   * one whole read under way and then ask for what changed since, instead of each reading
   * the whole realm again: the first fetches after a start (or after the copy was dropped)
   * arrive together, and a 1,000-person realm read whole by each of them was the slowest
   * answer of all. The delta asked afterwards is sent after the caller's own writes, so it
   * still sees them.
   */
  private readonly wholeReads = new Map<number, Promise<unknown>>();

  /** The realm's presence, or undefined when its visibility must be loaded first (the users service does that). */
  async read(realmId: number): Promise<RealmView | undefined> {
    const pending = this.copies.has(realmId) ? undefined : this.wholeReads.get(realmId);
    if (pending) await pending.catch(() => undefined);
    const held = this.copies.get(realmId);
    if (held || this.wholeReads.has(realmId)) return this.readFrom(realmId, held);
    const whole = this.readFrom(realmId, undefined);
    const done = () => this.wholeReads.delete(realmId);
    this.wholeReads.set(realmId, whole);
    whole.then(done, done);
    return whole;
  }

  /**
   * The caller's ping, then the realm's presence as of right after it: one script (one
   * command and one reply) when this process holds a copy of the realm, which the read
   * extends; else undefined, and the caller pings and reads on its own. `view` is there when
   * the ping was recorded or the user is hidden (undefined in it: the visibility must be
   * loaded first).
   */
  async pingThenRead(realmId: number, ping: PingRequest): Promise<{ ping: PingOutcome; view?: RealmView | undefined } | undefined> {
    const held = this.copies.get(realmId);
    if (!held) return undefined;
    const r = await this.store.pingAndReadSince(realmId, ping, held.base, held.seq);
    if (!('read' in r)) return { ping: r.ping };
    return { ping: r.ping, view: await this.take(realmId, r.read) };
  }

  private async readFrom(realmId: number, held: Copy | undefined): Promise<RealmView | undefined> {
    return this.take(realmId, await this.store.readSince(realmId, held?.base ?? '', held?.seq ?? -1));
  }

  /** Brings the realm's copy up to date with what the store answered. */
  private async take(realmId: number, r: ReadSince | undefined): Promise<RealmView | undefined> {
    if (!r) return undefined;
    if (r.kind === 'disabled') {
      this.copies.delete(realmId);
      return { disabled: true };
    }
    // Reads of one realm may overlap: an entry is replaced only by a newer one and a copy only
    // by a newer whole read, so a late answer never brings back older data.
    const current = this.copies.get(realmId);
    let copy: Copy;
    if (r.kind === 'delta') {
      // The copy this extends was replaced meanwhile (rare): ask again from the current one.
      if (!current || current.base !== r.base) return this.read(realmId);
      copy = current;
      for (const e of r.entries) {
        const had = copy.entries.get(e.userId);
        if (!had || had.updateId < e.updateId) {
          copy.entries.set(e.userId, e);
          copy.revision++;
        }
      }
      copy.seq = Math.max(copy.seq, r.seq);
    } else if (!current || current.base !== r.base || current.seq <= r.seq) {
      copy = { base: r.base, seq: r.seq, entries: new Map(r.entries.map((e) => [e.userId, e])), revision: 0 };
    } else {
      copy = current;
    }
    this.copies.delete(realmId);
    this.copies.set(realmId, copy);
    this.evictBeyond(realmId);
    return { disabled: false, entries: copy.entries.values(), peopleToken: r.peopleToken, copy, revision: copy.revision };
  }

  /** Drops the least recently read copies while all of them hold more than `maxEntries`. */
  private evictBeyond(keep: number): void {
    let total = 0;
    for (const c of this.copies.values()) total += c.entries.size;
    for (const [id, c] of this.copies) {
      if (total <= this.maxEntries) break;
      if (id === keep) continue;
      this.copies.delete(id);
      total -= c.entries.size;
    }
  }
}
