/**
 * The `presences` member of a modern-format answer for a whole realm, kept serialised in
 * blocks of consecutive entries of a reader's copy (reader.ts). A fetch without
 * `last_update_id` (a client's first, and every slim GET /realm/presence) lists everyone seen
 * in the last two weeks: for a 1,000-person realm, joining 1,000 entries' bytes each time was
 * most of the answer's CPU. A block is joined again only when one of its entries was replaced
 * (the copy replaces an entry object on every update) or one may have left the window, so a
 * ping that changes someone's presence costs one block, not the realm.
 *
 * The joined member itself is kept too, for the copy's revision: while nothing in the copy
 * changed and nobody may have left the window (most fetches: a realm's entries change about
 * once a minute each, its fetches come many times a second), an answer costs no walk over
 * the entries and no joining.
 */
import { PRESENCE_TIMING } from '../contracts/index.js';
import type { PresenceEntry } from './store.js';
import { modernPresence, presencesMemberParts } from './view.js';

/** Entries per block: small enough that rejoining one is cheap, large enough that an answer has few parts. */
const BLOCK_SIZE = 64;

interface Block {
  /** The entry objects the bytes were made from, listed or not, in the copy's order. */
  entries: PresenceEntry[];
  /** The listed entries' `"id":{…}` members joined with commas (empty when none is listed). */
  bytes: Buffer;
  /** The newest listed update id (-1 when none is listed). */
  lastUpdateId: number;
  /** From this time (s) on a listed entry may have left the window. */
  staleFromS: number;
  /** When it was made (s): a clock set back could bring entries back into the window. */
  madeAtS: number;
}

const WINDOW_SECONDS = PRESENCE_TIMING.historyLimitDays * 86_400;
const COMMA = Buffer.from(',');
const EMPTY = Buffer.alloc(0);

/** An entry's member of the modern answer as UTF-8 bytes, kept while the entry object lives (a copy replaces updated entries). */
const memberBytes = new WeakMap<PresenceEntry, Buffer>();

export function modernMemberBytes(e: PresenceEntry): Buffer {
  let b = memberBytes.get(e);
  if (!b) memberBytes.set(e, (b = Buffer.from(`"${e.userId}":${JSON.stringify(modernPresence(e))}`)));
  return b;
}

function makeBlock(entries: PresenceEntry[], nowS: number): Block {
  const oldest = nowS - WINDOW_SECONDS;
  const parts: Buffer[] = [];
  let lastUpdateId = -1;
  let staleFromS = Infinity;
  for (const e of entries) {
    if (e.idleTs < oldest) continue;
    if (parts.length > 0) parts.push(COMMA);
    parts.push(modernMemberBytes(e));
    lastUpdateId = Math.max(lastUpdateId, e.updateId);
    staleFromS = Math.min(staleFromS, e.idleTs + WINDOW_SECONDS + 1);
  }
  return { entries, bytes: Buffer.concat(parts), lastUpdateId, staleFromS, madeAtS: nowS };
}

function stillGood(b: Block | undefined, entries: readonly PresenceEntry[], nowS: number): b is Block {
  if (!b || b.entries.length !== entries.length || nowS >= b.staleFromS || nowS < b.madeAtS) return false;
  for (let i = 0; i < entries.length; i++) if (b.entries[i] !== entries[i]) return false;
  return true;
}

/** Blocks per copy (the `copy` key of reader.ts's view), dropped with the copy. */
const blocksOf = new WeakMap<object, Block[]>();

interface Member {
  revision: number;
  /** `"presences":{…}` as UTF-8. */
  bytes: Buffer;
  lastUpdateId: number;
  staleFromS: number;
  madeAtS: number;
}

/** The joined member per copy (at the revision it was made from), dropped with the copy. */
const memberOf = new WeakMap<object, Member>();

/**
 * The realm's modern `"presences":{…}` member with the default window (everyone seen in the
 * last `historyLimitDays`) as UTF-8, and the newest listed update id (-1 when nobody is
 * listed). `copy` and `revision` identify the copy `entries` come from and its state.
 */
export function modernRealmPresences(copy: object, revision: number, entries: Iterable<PresenceEntry>, nowMs: number): { bytes: Buffer; lastUpdateId: number } {
  const nowS = Math.floor(nowMs / 1000);
  const held = memberOf.get(copy);
  if (held && held.revision === revision && nowS < held.staleFromS && nowS >= held.madeAtS) return held;
  const listed: Buffer[] = [];
  const member: Member = { revision, bytes: EMPTY, lastUpdateId: -1, staleFromS: Infinity, madeAtS: nowS };
  for (const b of blocksFor(copy, entries, nowS)) {
    if (b.bytes.length > 0) listed.push(b.bytes);
    member.lastUpdateId = Math.max(member.lastUpdateId, b.lastUpdateId);
    member.staleFromS = Math.min(member.staleFromS, b.staleFromS);
  }
  member.bytes = Buffer.concat(presencesMemberParts(listed));
  memberOf.set(copy, member);
  return member;
}

/** The copy's blocks as of now, rejoining only those whose entries changed or may have left the window. */
function blocksFor(copy: object, entries: Iterable<PresenceEntry>, nowS: number): Block[] {
  const had = blocksOf.get(copy) ?? [];
  const made: Block[] = [];
  let chunk: PresenceEntry[] = [];
  const close = () => {
    const old = had[made.length];
    made.push(stillGood(old, chunk, nowS) ? old : makeBlock(chunk, nowS));
    chunk = [];
  };
  for (const e of entries) {
    chunk.push(e);
    if (chunk.length === BLOCK_SIZE) close();
  }
  if (chunk.length > 0) close();
  blocksOf.set(copy, made);
  return made;
}

/**
 * The member's parts: the non-empty blocks' bytes (to be joined with commas) and the newest
 * listed update id (-1 when nobody is listed).
 */
export function modernRealmMembers(copy: object, entries: Iterable<PresenceEntry>, nowMs: number): { blocks: Buffer[]; lastUpdateId: number } {
  const blocks: Buffer[] = [];
  let lastUpdateId = -1;
  for (const b of blocksFor(copy, entries, Math.floor(nowMs / 1000))) {
    if (b.bytes.length > 0) blocks.push(b.bytes);
    lastUpdateId = Math.max(lastUpdateId, b.lastUpdateId);
  }
  return { blocks, lastUpdateId };
}
