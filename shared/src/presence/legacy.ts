/**
 * The legacy presence answer (keyed by the email everyone may see; GET /realm/presence as
 * zulip-terminal asks it every minute), built as JSON text by whichever service serves it: the
 * gateway from its copy of the realm's presence, the users service otherwise. Zulip's
 * zerver/lib/presence.py. Since Zulip 7.0 the server keeps no per-client data, so the legacy
 * format always names one client, "website", with `aggregated` a copy of it.
 *
 * Display emails come from PresencePeople, a per-process copy good while the realm's people
 * token in Redis is the one it was read under. The users service gives the realm a new token
 * after committing any change of what the copy holds (an address, a deactivation or
 * reactivation, the realm's settings: `email_address_visibility`, the host), before answering,
 * so every process's next read sees the change. A user the copy does not know yet (a new
 * user's first ping) is asked for on its own. The token is read before the rows it guards, so
 * a change committed meanwhile is caught by the next read.
 */
import { randomBytes } from 'node:crypto';
import { PRESENCE_TIMING } from '../contracts/index.js';
import type { Redis } from '../redis/index.js';
import { presencePeopleTokenKey, type PresenceEntry, type RealmPresence } from './store.js';
import { entriesInWindow, lastUpdateIdOf, presenceAnswerTail, presencesMemberParts, type PresenceFetch } from './view.js';

export interface LegacyClientPresence {
  client: 'website';
  status: 'active' | 'idle';
  timestamp: number;
  pushable: false;
}

/** Active when the last activity is close enough to the last connection (format_legacy_presence_dict). */
export function legacyClientPresence(e: PresenceEntry): LegacyClientPresence {
  const active = e.activeTs > 0 && e.activeTs + PRESENCE_TIMING.legacyActivityOffsetSeconds >= e.idleTs;
  return { client: 'website', status: active ? 'active' : 'idle', timestamp: active ? e.activeTs : e.idleTs, pushable: false };
}

export function legacyPresence(e: PresenceEntry): { aggregated: Omit<LegacyClientPresence, 'pushable'>; website: LegacyClientPresence } {
  const website = legacyClientPresence(e);
  return { aggregated: { client: website.client, status: website.status, timestamp: website.timestamp }, website };
}

/** An entry's value in the legacy answer, as JSON text, kept while the entry object lives (readers replace updated entries). */
const legacyTexts = new WeakMap<PresenceEntry, string>();

function legacyTextOf(e: PresenceEntry): string {
  let t = legacyTexts.get(e);
  if (t === undefined) legacyTexts.set(e, (t = JSON.stringify(legacyPresence(e))));
  return t;
}

/** What a legacy answer lists: each entry under its display email (JSON text), and the answer's last update id. */
export interface LegacyListing {
  members: Array<{ email: string; entry: PresenceEntry }>;
  lastUpdateId: number;
  /** The display emails used (PresencePeople's map; undefined when nobody was listed), as an identity. */
  emails?: object;
}

export async function legacyPresenceListing(
  stored: RealmPresence,
  f: PresenceFetch,
  people: { copy: PresencePeople; realmId: number; token: string; load: PresenceEmailLoader },
  nowMs: number,
): Promise<LegacyListing> {
  const entries = entriesInWindow(stored, f, nowMs);
  const members: LegacyListing['members'] = [];
  if (!entries || entries.length === 0) return { members, lastUpdateId: lastUpdateIdOf(entries, f) };
  const emails = await people.copy.emailsOf(people.realmId, people.token, entries.map((e) => e.userId), people.load, nowMs);
  for (const e of entries) {
    const email = emails.get(e.userId);
    if (email) members.push({ email, entry: e });
  }
  return { members, lastUpdateId: lastUpdateIdOf(entries, f), emails };
}

/** The legacy answer's JSON text (`presences`, `server_timestamp`, `presence_last_update_id`). */
export async function legacyPresenceText(
  stored: RealmPresence,
  f: PresenceFetch,
  people: { copy: PresencePeople; realmId: number; token: string; load: PresenceEmailLoader },
  nowMs: number,
): Promise<string> {
  const { members, lastUpdateId } = await legacyPresenceListing(stored, f, people, nowMs);
  return `{"presences":{${members.map((m) => `${m.email}:${legacyTextOf(m.entry)}`).join(',')}},${presenceAnswerTail(nowMs, lastUpdateId)}}`;
}

/** An entry's member of the legacy answer as UTF-8 bytes, kept while the entry object lives and its email stays. */
const legacyBytes = new WeakMap<PresenceEntry, { email: string; bytes: Buffer }>();

/**
 * The `"presences":{…}` member of a listing as UTF-8 parts (cached members, presencesMemberParts):
 * a 1,000-person answer is ~150 KB, whose encoding on every call cost more than building it.
 */
export function legacyPresencesParts(listing: LegacyListing): Buffer[] {
  return presencesMemberParts(
    listing.members.map((m) => {
      let held = legacyBytes.get(m.entry);
      if (!held || held.email !== m.email) legacyBytes.set(m.entry, (held = { email: m.email, bytes: Buffer.from(`${m.email}:${legacyTextOf(m.entry)}`) }));
      return held.bytes;
    }),
  );
}

/** The joined member of a realm's default-window answer, per reader copy (reader.ts's view `copy`), dropped with it. */
const legacyMemberOf = new WeakMap<object, LegacyMember>();

interface LegacyMember {
  /** The copy's revision and the display emails (PresencePeople's map) it was made from. */
  revision: number;
  emails: object;
  /** `"presences":{…}` as UTF-8. */
  bytes: Buffer;
  lastUpdateId: number;
  /** From this time (s) on a listed entry may have left the window. */
  staleFromS: number;
  madeAtS: number;
}

const WINDOW_SECONDS = PRESENCE_TIMING.historyLimitDays * 86_400;

/**
 * The legacy `"presences":{…}` member of a default-window fetch (everyone seen in the last
 * `historyLimitDays`: zulip-terminal's fetch every minute) as UTF-8, and the newest listed
 * update id, kept for the reader copy's revision and the display emails it was made with:
 * while neither changed and nobody may have left the window, an answer costs no walk over
 * the entries, no email lookups and no joining (a 1,000-person answer is ~150 KB).
 */
export async function legacyRealmPresences(
  copy: object,
  revision: number,
  entries: Iterable<PresenceEntry>,
  people: { copy: PresencePeople; realmId: number; token: string; load: PresenceEmailLoader },
  nowMs: number,
): Promise<{ bytes: Buffer; lastUpdateId: number }> {
  const nowS = Math.floor(nowMs / 1000);
  const held = legacyMemberOf.get(copy);
  const emails = people.copy.heldEmails(people.realmId, people.token, nowMs);
  if (held && held.emails === emails && held.revision === revision && nowS < held.staleFromS && nowS >= held.madeAtS) return held;
  // The entries as of this revision, taken before the emails are awaited.
  const stored: RealmPresence = { realmDisabled: false, lastUpdateId: -1, entries: [...entries] };
  const listing = await legacyPresenceListing(stored, { slim_presence: false }, people, nowMs);
  let staleFromS = Infinity;
  for (const e of stored.entries) if (e.idleTs >= nowS - WINDOW_SECONDS) staleFromS = Math.min(staleFromS, e.idleTs + WINDOW_SECONDS + 1);
  const member: LegacyMember = {
    revision,
    // Nobody listed: no emails involved, and the next call finds none held to compare (made again; cheap).
    emails: listing.emails ?? {},
    bytes: Buffer.concat(legacyPresencesParts(listing)),
    lastUpdateId: listing.lastUpdateId,
    staleFromS,
    madeAtS: nowS,
  };
  legacyMemberOf.set(copy, member);
  return member;
}

/** A copy older than this is read again whatever its token says (a change made without Redis, e.g. the CLI offline). */
const MAX_AGE_MS = 10 * 60 * 1000;
/** Realms kept at most; past it the least recently read are dropped. */
const MAX_REALMS = 500;
const TOKEN_TTL_MS = 7 * 24 * 3600 * 1000;


/** The realm's people token ('' when it has none yet). */
export async function presencePeopleToken(redis: Redis, prefix: string, realmId: number): Promise<string> {
  return (await redis.get(presencePeopleTokenKey(prefix, realmId))) ?? '';
}

/** Gives the realm a new people token: every process's copy of its display emails is read again. */
export async function renewPresencePeopleToken(redis: Redis, prefix: string, realmId: number): Promise<void> {
  await redis.set(presencePeopleTokenKey(prefix, realmId), randomBytes(9).toString('base64'), 'PX', TOKEN_TTL_MS);
}

/** Display emails of users of the realm, null for those presence does not list (inactive, bots, unknown). */
export type PresenceEmailLoader = (userIds: readonly number[]) => Promise<ReadonlyMap<number, string | null>>;

interface RealmPeople {
  token: string;
  loadedAt: number;
  /** user id -> display email as JSON text (quoted), or null when the user is not listed. */
  emails: Map<number, string | null>;
}

export class PresencePeople {
  private readonly realms = new Map<number, RealmPeople>();

  /**
   * The realm's display emails held under `token` (not too old), or undefined: as an identity
   * for what was made from them (legacyRealmPresences). A held map only gains users, never
   * changes one.
   */
  heldEmails(realmId: number, token: string, nowMs = Date.now()): object | undefined {
    const copy = this.realms.get(realmId);
    return copy && copy.token === token && nowMs - copy.loadedAt <= MAX_AGE_MS ? copy.emails : undefined;
  }

  /** The display emails (JSON text, null when not listed) of `userIds`, under `token` (read from presencePeopleToken before this call); `load` reads those not held. */
  async emailsOf(realmId: number, token: string, userIds: readonly number[], load: PresenceEmailLoader, nowMs = Date.now()): Promise<ReadonlyMap<number, string | null>> {
    let copy = this.realms.get(realmId);
    if (!copy || copy.token !== token || nowMs - copy.loadedAt > MAX_AGE_MS) copy = { token, loadedAt: nowMs, emails: new Map() };
    const held = copy.emails;
    const missing = userIds.filter((id) => !held.has(id));
    if (missing.length > 0) {
      const found = await load(missing);
      for (const id of missing) {
        const email = found.get(id);
        held.set(id, email ? JSON.stringify(email) : null);
      }
    }
    this.realms.delete(realmId);
    this.realms.set(realmId, copy);
    if (this.realms.size > MAX_REALMS) {
      const oldest = this.realms.keys().next().value;
      if (oldest !== undefined) this.realms.delete(oldest);
    }
    return held;
  }
}
