/**
 * Presence in Redis, shared by the users service (which owns it: visibility from PostgreSQL,
 * `presence` events) and the gateway (which stores steady pings and serves modern-format
 * fetches itself, sparing the bus hop on the most frequent request of a chat server).
 */
export { PresenceStore, presenceRealmKey, type PingOutcome, type PingRequest, type PingRules, type PresenceEntry, type ReadSince, type RealmPresence } from './store.js';
export { PresenceReader, type RealmView } from './reader.js';
export { modernMemberBytes, modernRealmMembers, modernRealmPresences } from './modern-blocks.js';
export {
  entriesInWindow,
  inFetchWindow,
  lastUpdateIdOf,
  modernPresence,
  modernRealmPresence,
  oldestListedSeconds,
  presenceAnswerTail,
  presencesMemberParts,
  wantsModernPresence,
  type ModernPresence,
  type PresenceAnswer,
  type PresenceFetch,
} from './view.js';
export {
  PresencePeople,
  legacyClientPresence,
  legacyPresence,
  legacyPresenceListing,
  legacyPresencesParts,
  legacyRealmPresences,
  legacyPresenceText,
  type LegacyListing,
  presencePeopleToken,
  renewPresencePeopleToken,
  type LegacyClientPresence,
  type PresenceEmailLoader,
} from './legacy.js';
