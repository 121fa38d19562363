/**
 * The event queues in Redis, shared by the events service (which registers queues, appends
 * events to them, expires them and elects the appending leader) and the gateway (which
 * serves GET /events straight from them, as Tornado does in Zulip: the process holding the
 * client's request reads the queue, with no bus hop per poll). Keys in keys.ts, the poll
 * side's scripts in lua.ts.
 */
export * from './keys.js';
export { QUEUE_PRELUDE } from './lua.js';
export { PollStore, type PollMode, type PollOptions, type PollResult } from './poll-store.js';
export { PollHub, UNEXPECTED, badEventQueueId, withId, type PollAnswer, type PollHubOptions, type PollReply, type PollRequest } from './poll-hub.js';
