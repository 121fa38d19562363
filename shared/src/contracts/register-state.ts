/**
 * The wire form of RegisterStateReply (`<owner>.v1.register_state`), written by each state owner
 * and read by the events service without parsing the state: a 5,000-person realm's state is
 * 1.7 MB of JSON that the events service only splices into /register's reply. The owner puts the
 * state's keys before the state and the state last, so the reader finds the state's text by
 * position and still knows which keys it holds (to leave out the empty defaults of those keys).
 */
import { RawJson } from '../bus/raw-json.js';

/** What an owner's handler returns: `{snapshot, keys, state}` in that order. */
export function registerStateReply(snapshot: string, state: Record<string, unknown>): RawJson {
  const keys = Object.keys(state).filter((k) => state[k] !== undefined);
  return new RawJson(`{"snapshot":${JSON.stringify(snapshot)},"keys":${JSON.stringify(keys)},"state":${JSON.stringify(state)}}`);
}

export interface RegisterStateText {
  snapshot: string;
  /** The state's top-level keys. */
  keys: string[];
  /** The state object's JSON text. */
  state: RawJson;
}

const SNAPSHOT = '{"snapshot":';
const KEYS = ',"keys":';
const STATE = ',"state":';

/** Reads a reply written by `registerStateReply`; anything else (an older replica) is parsed. */
export function readRegisterStateReply(reply: RawJson): RegisterStateText {
  const { text } = reply;
  // Snapshots (`xmin:xmax:xip,...`) and key names hold no quote, so indexOf finds the ends.
  const keysAt = text.startsWith(SNAPSHOT) ? text.indexOf(KEYS) : -1;
  const stateAt = keysAt > 0 ? text.indexOf(STATE, keysAt) : -1;
  if (stateAt > 0 && text.endsWith('}}')) {
    const snapshot: unknown = JSON.parse(text.slice(SNAPSHOT.length, keysAt));
    const keys: unknown = JSON.parse(text.slice(keysAt + KEYS.length, stateAt));
    if (typeof snapshot === 'string' && Array.isArray(keys) && keys.every((k) => typeof k === 'string')) {
      return { snapshot, keys, state: new RawJson(text.slice(stateAt + STATE.length, -1)) };
    }
  }
  const parsed = JSON.parse(text) as { snapshot?: unknown; state?: unknown };
  if (typeof parsed.snapshot !== 'string' || typeof parsed.state !== 'object' || parsed.state === null) {
    throw new SyntaxError('register_state reply without snapshot and state');
  }
  const state = parsed.state as Record<string, unknown>;
  return { snapshot: parsed.snapshot, keys: Object.keys(state), state: new RawJson(JSON.stringify(state)) };
}
