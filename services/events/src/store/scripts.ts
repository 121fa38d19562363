/**
 * Lua scripts on one queue's keys (KEYS[1] = meta hash, KEYS[2] = event stream). Each runs
 * atomically, so a queue's ids, acknowledgements and snapshot filtering never interleave
 * with another replica's writes. Every script first checks the queue is alive: both keys
 * exist (a queue whose meta or stream vanished — FLUSHALL, eviction, expiry — is dead, and
 * its leftover key is removed, so nothing ever writes into a half-lost queue) and it has not
 * overflowed. A stream entry's id is `<event id>-1`; its fields are `e` (event JSON without
 * id), `o` (origin service) and `t` (writing transaction id), the last two empty for events
 * that did not come from an outbox.
 */

const PRELUDE = `
local meta, stream = KEYS[1], KEYS[2]
local function state()
  local m, s = redis.call('EXISTS', meta), redis.call('EXISTS', stream)
  if m == 1 and redis.call('HGET', meta, 'overflowed') then return 'overflowed' end
  if m == 0 or s == 0 then
    redis.call('DEL', meta, stream)
    return 'gone'
  end
  return 'ok'
end
-- pg_visible_in_snapshot for a snapshot written as 'xmin:xmax:xip,xip,...'.
local function visible(txid, snap)
  local xmin, xmax, xip = string.match(snap, '^(%d+):(%d+):(.*)$')
  if not xmin then return false end
  if txid < tonumber(xmin) then return true end
  if txid >= tonumber(xmax) then return false end
  for x in string.gmatch(xip, '%d+') do
    if tonumber(x) == txid then return false end
  end
  return true
end
local function alreadyInState(origin, txid)
  if origin == '' or txid == '' then return false end
  local snap = redis.call('HGET', meta, 'snap:' .. origin)
  return snap and visible(tonumber(txid), snap)
end
local function eventId(entryId)
  return tonumber(string.match(entryId, '^(%d+)'))
end
-- Bytes of event JSON the queue holds unacknowledged ('bytes'), for the per-queue budget.
local function entryBytes(entry)
  for j = 1, #entry[2], 2 do
    if entry[2][j] == 'e' then return #entry[2][j + 1] end
  end
  return 0
end
`;

/**
 * ARGV: ttl ms, then field/value pairs. Returns 1, or 0 if the id is taken. The ttl may be
 * shorter than the queue's lifespan: a queue nobody has polled yet lives only that long.
 */
export const CREATE = `${PRELUDE}
if redis.call('EXISTS', meta) == 1 or redis.call('EXISTS', stream) == 1 then return 0 end
redis.call('HSET', meta, unpack(ARGV, 2))
-- MKSTREAM is the only way to make an empty stream; the group itself is never read.
redis.call('XGROUP', 'CREATE', stream, 'exists', '$', 'MKSTREAM')
redis.call('PEXPIRE', meta, ARGV[1])
redis.call('PEXPIRE', stream, ARGV[1])
return 1
`;

/** A queue not polled yet may hold 1/this of the per-queue byte budget (ZC_MAX_EVENT_BYTES_PER_QUEUE). */
export const UNPOLLED_BYTES_SHARE = 16;

/**
 * Appends `events` (a list of {seq, origin, txid, json}) to the queue whose keys `meta` and
 * `stream` hold now. Fencing: the queue remembers the highest leader term that appended to it
 * and refuses a lower one (a former leader that resumed after a pause), so once a newer leader
 * has written here an older one never can. Events with a seq at or below the queue's last
 * applied seq are skipped (a redelivery after a leader change); events the queue's /register
 * state already holds are dropped. Returns the number appended, -1 for a dead queue, -2 when
 * this append overflowed it (more events, or more bytes of event JSON, than the limits), -3
 * when the caller is fenced off.
 */
const APPEND_FUNCTION = `
local UNPOLLED_SHARE = ${UNPOLLED_BYTES_SHARE}
local function appendEvents(term, maxEvents, maxBytes, events)
  if state() ~= 'ok' then return -1 end
  if tonumber(redis.call('HGET', meta, 'term') or '0') > term then return -3 end
  redis.call('HSET', meta, 'term', term)
  local lastSeq = tonumber(redis.call('HGET', meta, 'last_seq') or '0')
  local newestSeq, appended = lastSeq, 0
  for _, e in ipairs(events) do
    local seq = e[1]
    if seq > lastSeq then
      if seq > newestSeq then newestSeq = seq end
      if not alreadyInState(e[2], e[3]) then
        local id = redis.call('HINCRBY', meta, 'next_id', 1) - 1
        redis.call('XADD', stream, id .. '-1', 'e', e[4], 'o', e[2], 't', e[3])
        redis.call('HINCRBY', meta, 'bytes', #e[4])
        appended = appended + 1
      end
    end
  end
  if newestSeq > lastSeq then redis.call('HSET', meta, 'last_seq', newestSeq) end
  -- A queue never polled yet (a client that registered and left, or has not started polling)
  -- holds a sixteenth of the budget, so a user's unpolled queues cannot hold much of Redis for
  -- the minutes until they expire; polling clients start within seconds of /register.
  if redis.call('HEXISTS', meta, 'polled') == 0 then maxBytes = math.floor(maxBytes / UNPOLLED_SHARE) end
  if appended > 0 and (redis.call('XLEN', stream) > maxEvents or tonumber(redis.call('HGET', meta, 'bytes')) > maxBytes) then
    redis.call('HSET', meta, 'overflowed', '1')
    redis.call('DEL', stream)
    return -2
  end
  return appended
end
`;

/**
 * Appends events to many queues in one call (APPEND_FUNCTION for each), sending each distinct
 * event JSON once: a stream's message reaches most of its recipients' queues byte for byte the
 * same, and sent once per queue that JSON was most of what the appender wrote to Redis (and
 * most of Redis's parsing).
 * KEYS: meta and stream of each queue, in turn. ARGV: leader term, max events, max bytes,
 * number of JSON texts, the texts, then per queue: its event count and per event JetStream
 * seq, origin, txid and the 1-based index of its JSON. Returns each queue's result, in
 * order. Like MEMBERS_OF_MANY it spans many cluster slots: one Redis, not a Cluster.
 *
 * PRELUDE's helpers read the queue's keys from its meta and stream locals (upvalues),
 * so pointing those at each queue in turn makes them act on that queue.
 */
export const APPEND = `${PRELUDE}${APPEND_FUNCTION}
local term, maxEvents, maxBytes, nJson = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local at = 5 + nJson
local out = {}
for q = 1, #KEYS / 2 do
  meta, stream = KEYS[q * 2 - 1], KEYS[q * 2]
  local n = tonumber(ARGV[at])
  local events = {}
  for i = 0, n - 1 do
    local base = at + 1 + i * 4
    events[i + 1] = {tonumber(ARGV[base]), ARGV[base + 1], ARGV[base + 2], ARGV[4 + tonumber(ARGV[base + 3])]}
  end
  at = at + 1 + n * 4
  out[q] = appendEvents(term, maxEvents, maxBytes, events)
end
return out
`;

/**
 * Ends /register: stores the snapshot of every origin whose state was fetched, deletes the
 * queued events those snapshots already hold, and sets the acknowledged id just below the
 * first event the state does not hold. ARGV: count, then origin/snapshot pairs. Returns that
 * id (the reply's last_event_id), or -2 for a dead queue.
 */
export const FINISH_REGISTER = `${PRELUDE}
if state() ~= 'ok' then return -2 end
local n = tonumber(ARGV[1])
for i = 0, n - 1 do
  redis.call('HSET', meta, 'snap:' .. ARGV[2 + i * 2], ARGV[3 + i * 2])
end
local firstKept = nil
for _, entry in ipairs(redis.call('XRANGE', stream, '-', '+')) do
  local f = {}
  for j = 1, #entry[2], 2 do f[entry[2][j]] = entry[2][j + 1] end
  if alreadyInState(f['o'] or '', f['t'] or '') then
    redis.call('XDEL', stream, entry[1])
    redis.call('HINCRBY', meta, 'bytes', -#(f['e'] or ''))
  elseif not firstKept then
    firstKept = eventId(entry[1])
  end
end
local acked = (firstKept or tonumber(redis.call('HGET', meta, 'next_id'))) - 1
redis.call('HSET', meta, 'pruned', acked)
return acked
`;

/**
 * GET /events in one round trip. ARGV: user id, last_event_id, max events, mode, now (ms),
 * extra ttl ms for a park, this replica's id, the parked poll's generation (mode 'wake'),
 * '1' if the poller is now a guest (their all_public_streams queue is removed: 'gone').
 * Modes:
 * - 'ack': acknowledge last_event_id (Zulip's pruning rules), return the events after it;
 * - 'park': the same, and if there are none, park: restart the idle clock, keep the queue
 *   alive while parked, count a new poll generation and record this replica as the parker;
 * - 'wake': a parked poll re-reads without acknowledging; if events are there it ends, so
 *   the idle clock restarts and the parker is cleared (if it is still this poll).
 * Replies: {'ok', epoch, entryId, json, ...}, {'parked', epoch, generation, previous parker},
 * {'gone'}, {'overflowed'}, {'pruned', newest pruned id} or {'missing', id}.
 */
export const POLL = `${PRELUDE}
local st = state()
if st ~= 'ok' then return {st} end
if redis.call('HGET', meta, 'user_id') ~= ARGV[1] then return {'gone'} end
-- A guest (ARGV[9] = '1') may not read every public stream: a queue registered for them
-- before a demotion is removed at its owner's next poll, whatever it holds.
if ARGV[9] == '1' and redis.call('HGET', meta, 'all_public_streams') == '1' then
  redis.call('DEL', meta, stream)
  return {'gone'}
end
local last, mode = tonumber(ARGV[2]), ARGV[4]
-- The client has polled: the queue gets its whole byte budget from now on (see APPEND).
redis.call('HSETNX', meta, 'polled', '1')
local pruned = tonumber(redis.call('HGET', meta, 'pruned'))
if mode ~= 'wake' then
  if last < pruned then return {'pruned', tostring(pruned)} end
  if last > pruned then
    if last >= tonumber(redis.call('HGET', meta, 'next_id')) then return {'missing', tostring(last)} end
    if #redis.call('XRANGE', stream, last .. '-1', last .. '-1') == 0 then return {'missing', tostring(last)} end
    local freed = 0
    for _, entry in ipairs(redis.call('XRANGE', stream, '-', last .. '-1')) do freed = freed + entryBytes(entry) end
    redis.call('HINCRBY', meta, 'bytes', -freed)
    redis.call('XTRIM', stream, 'MINID', (last + 1) .. '-0')
    redis.call('HSET', meta, 'pruned', last)
    pruned = last
  end
end
local epoch = redis.call('HGET', meta, 'epoch')
local out = {'ok', epoch}
for _, entry in ipairs(redis.call('XRANGE', stream, (math.max(last, pruned) + 1) .. '-0', '+', 'COUNT', tonumber(ARGV[3]))) do
  out[#out + 1] = entry[1]
  for j = 1, #entry[2], 2 do
    if entry[2][j] == 'e' then out[#out + 1] = entry[2][j + 1] end
  end
end
local lifespan = tonumber(redis.call('HGET', meta, 'lifespan_ms'))
if mode == 'ack' then
  -- A poll that does not park (dont_block) is a connection too (Zulip's last_connection_time);
  -- it also ends the shorter life of a queue never polled yet (CREATE).
  redis.call('HSET', meta, 'last_connection', ARGV[5])
  redis.call('PEXPIRE', meta, lifespan, 'GT')
  redis.call('PEXPIRE', stream, lifespan, 'GT')
end
if #out > 2 then
  if mode == 'wake' then
    redis.call('HSET', meta, 'last_connection', ARGV[5])
    -- Never shorten the life a poll parked elsewhere has just given the queue.
    redis.call('PEXPIRE', meta, lifespan, 'GT')
    redis.call('PEXPIRE', stream, lifespan, 'GT')
    if redis.call('HGET', meta, 'poll_gen') == ARGV[8] then redis.call('HSET', meta, 'parked_on', '') end
  end
  return out
end
if mode == 'park' then
  redis.call('HSET', meta, 'last_connection', ARGV[5])
  redis.call('PEXPIRE', meta, lifespan + tonumber(ARGV[6]))
  redis.call('PEXPIRE', stream, lifespan + tonumber(ARGV[6]))
  local generation = redis.call('HINCRBY', meta, 'poll_gen', 1)
  local previous = redis.call('HGET', meta, 'parked_on') or ''
  redis.call('HSET', meta, 'parked_on', ARGV[7])
  return {'parked', epoch, tostring(generation), previous}
end
return out
`;

/**
 * A parked poll ended without events (this replica stops): the idle clock restarts now
 * (ARGV[1]) and the parker is cleared if it is still generation ARGV[2]. Returns -1 for a
 * dead queue.
 */
export const RELEASE = `${PRELUDE}
if state() ~= 'ok' then return -1 end
local lifespan = tonumber(redis.call('HGET', meta, 'lifespan_ms'))
redis.call('HSET', meta, 'last_connection', ARGV[1])
redis.call('PEXPIRE', meta, lifespan, 'GT')
redis.call('PEXPIRE', stream, lifespan, 'GT')
if redis.call('HGET', meta, 'poll_gen') == ARGV[2] then redis.call('HSET', meta, 'parked_on', '') end
return 0
`;

/** Appends a heartbeat (it uses up an event id, as in Zulip). Returns its id, or -1 for a dead queue. */
export const HEARTBEAT = `${PRELUDE}
if state() ~= 'ok' then return -1 end
local id = redis.call('HINCRBY', meta, 'next_id', 1) - 1
redis.call('XADD', stream, id .. '-1', 'e', '{"type":"heartbeat"}', 'o', '', 't', '')
redis.call('HINCRBY', meta, 'bytes', #'{"type":"heartbeat"}')
return id
`;

/** Deletes what is left of the queue if ARGV[1] owns it. Returns 1 if it was alive, else -1. */
export const DELETE = `${PRELUDE}
if redis.call('HGET', meta, 'user_id') ~= ARGV[1] then return -1 end
local st = state()
redis.call('DEL', meta, stream)
if st == 'ok' then return 1 end
return -1
`;

/**
 * The members of every index set in KEYS, one array per key in KEYS' order: the appender's
 * lookup of a message's recipients' queues as one command instead of one SMEMBERS per
 * recipient (10,000 for a large stream, each a command object in the client and a command
 * in Redis). The keys are read only. It touches many keys at once, which a single Redis
 * (or a primary with replicas) serves; a Redis Cluster would need the keys grouped by slot.
 */
export const MEMBERS_OF_MANY = `
local out = {}
for i, key in ipairs(KEYS) do out[i] = redis.call('SMEMBERS', key) end
return out
`;

/** Registry (KEYS[1]): created once per Redis dataset. ARGV: fresh epoch, starting cursor. Returns {epoch, cursor}. */
export const ENSURE_REGISTRY = `
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], 'epoch', ARGV[1], 'cursor', ARGV[2])
end
return redis.call('HMGET', KEYS[1], 'epoch', 'cursor')
`;

/**
 * Moves the delivery cursor forward if the registry still has epoch ARGV[1] and no leader of a
 * term newer than ARGV[3] has claimed it. Returns 1, 0 after a reset, -3 when fenced off.
 */
export const ADVANCE_CURSOR = `
if redis.call('HGET', KEYS[1], 'epoch') ~= ARGV[1] then return 0 end
if tonumber(redis.call('HGET', KEYS[1], 'term') or '0') > tonumber(ARGV[3]) then return -3 end
if tonumber(redis.call('HGET', KEYS[1], 'cursor')) < tonumber(ARGV[2]) then
  redis.call('HSET', KEYS[1], 'cursor', ARGV[2])
end
return 1
`;

/**
 * A new leader of term ARGV[1] claims the registry (KEYS[1]) before it reads the cursor, so a
 * former leader can no longer move the cursor. Returns 1, or -3 if a newer term holds it.
 */
export const CLAIM_REGISTRY = `
if tonumber(redis.call('HGET', KEYS[1], 'term') or '0') > tonumber(ARGV[1]) then return -3 end
redis.call('HSET', KEYS[1], 'term', ARGV[1])
return 1
`;

/**
 * Leader lock (KEYS[1]) and its term counter (KEYS[2]): taking a free lock starts a new term,
 * a number that only grows and that fences every write of the leader. ARGV: token, ttl ms,
 * the acquirer's clock (ms). The term is at least that clock, so it still grows when Redis
 * comes back empty: a counter restarting at 1 let a former leader, still writing with its old
 * (higher) term, fence off every new leader until the counter caught up (minutes).
 * Returns the term, or 0 if the lock is held.
 */
export const ACQUIRE_LOCK = `
if redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then
  local term = redis.call('INCR', KEYS[2])
  local floor = tonumber(ARGV[3]) or 0
  if term < floor then
    redis.call('SET', KEYS[2], ARGV[3])
    term = floor
  end
  return term
end
return 0
`;

/** Leader lock (KEYS[1]): renew (PEXPIRE) or release (DEL) only while ARGV[1] holds it. */
export const RENEW_LOCK = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`;
export const RELEASE_LOCK = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;
