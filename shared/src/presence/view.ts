/**
 * The modern (by user id) presence answer, built from the store by whichever service serves
 * it: the gateway answers steady clients' fetches itself, the users service everything that
 * needs PostgreSQL (the legacy format's emails). Zulip's zerver/lib/presence.py.
 */
import { PRESENCE_TIMING } from '../contracts/index.js';
import type { PresenceEntry, RealmPresence } from './store.js';

export interface ModernPresence {
  active_timestamp: number;
  idle_timestamp: number;
}

/** What a presence fetch asks for (POST /users/me/presence, GET /realm/presence, /register). */
export interface PresenceFetch {
  slim_presence: boolean;
  last_update_id?: number | undefined;
  history_limit_days?: number | undefined;
}

// A type, not an interface, so that it passes where JSON objects (index signatures) are expected.
export type PresenceAnswer = {
  presences: Record<string, unknown>;
  server_timestamp: number;
  presence_last_update_id: number;
};

/** Whether the fetch wants the modern format (by user id) rather than the legacy one (by email). */
export const wantsModernPresence = (f: PresenceFetch): boolean => f.slim_presence || f.last_update_id !== undefined;

export function modernPresence(e: PresenceEntry): ModernPresence {
  return { active_timestamp: e.activeTs, idle_timestamp: e.idleTs };
}

/**
 * Whether an entry belongs in a fetch: a client holding data (`lastUpdateId` > 0) gets what
 * changed since; otherwise what was seen within `historyLimitDays` (14 by default).
 */
export function inFetchWindow(e: PresenceEntry, nowSeconds: number, f: { lastUpdateId?: number | undefined; historyLimitDays?: number | undefined }): boolean {
  if (f.lastUpdateId !== undefined && f.lastUpdateId > 0) return e.updateId > f.lastUpdateId;
  return e.idleTs >= oldestListedSeconds({ history_limit_days: f.historyLimitDays }, nowSeconds);
}

/** The oldest connection time (s) a fetch without data lists: `history_limit_days` back (14 by default). */
export function oldestListedSeconds(f: { history_limit_days?: number | undefined }, nowSeconds: number): number {
  return nowSeconds - (f.history_limit_days ?? PRESENCE_TIMING.historyLimitDays) * 86_400;
}

/** The entries a fetch gets, or undefined when the realm disables presence (nobody is listed). */
export function entriesInWindow(stored: { realmDisabled: boolean; entries: Iterable<PresenceEntry> }, f: PresenceFetch, nowMs: number): PresenceEntry[] | undefined {
  if (stored.realmDisabled) return undefined;
  const nowS = Math.floor(nowMs / 1000);
  const window = { lastUpdateId: f.last_update_id, historyLimitDays: f.history_limit_days };
  const listed: PresenceEntry[] = [];
  for (const e of stored.entries) if (inFetchWindow(e, nowS, window)) listed.push(e);
  return listed;
}

/**
 * The answer's last update id: the newest entry's, never below what the client already holds
 * (-1 when the realm disables presence).
 */
export function lastUpdateIdOf(entries: readonly PresenceEntry[] | undefined, f: PresenceFetch): number {
  if (!entries) return -1;
  const newest = entries.reduce((m, e) => Math.max(m, e.updateId), -1);
  return Math.max(newest, f.last_update_id ?? -1);
}

/** The members after `presences`, as JSON text without braces: `"server_timestamp":…,"presence_last_update_id":…` (both formats). */
export function presenceAnswerTail(nowMs: number, lastUpdateId: number): string {
  return JSON.stringify({ server_timestamp: nowMs / 1000, presence_last_update_id: lastUpdateId }).slice(1, -1);
}

/**
 * The `"presences":{…}` member of an answer from the listed users' `"key":value` bytes (both
 * formats cache those per entry; modern-blocks.ts joins runs of them), as the parts to send: a
 * 1,000-person answer is joined once, with the rest of the reply, not once more here.
 */
export function presencesMemberParts(members: readonly Buffer[]): Buffer[] {
  const parts: Buffer[] = [PRESENCES_OPEN];
  members.forEach((m, i) => {
    if (i > 0) parts.push(COMMA);
    parts.push(m);
  });
  parts.push(CLOSE_BRACE);
  return parts;
}

const PRESENCES_OPEN = Buffer.from('"presences":{');
const CLOSE_BRACE = Buffer.from('}');
const COMMA = Buffer.from(',');

/** The modern-format answer (`slim_presence` or `last_update_id`). */
export function modernRealmPresence(stored: RealmPresence, f: PresenceFetch, nowMs: number): PresenceAnswer {
  const entries = entriesInWindow(stored, f, nowMs);
  const presences: Record<string, ModernPresence> = {};
  for (const e of entries ?? []) presences[String(e.userId)] = modernPresence(e);
  return { presences, server_timestamp: nowMs / 1000, presence_last_update_id: lastUpdateIdOf(entries, f) };
}
