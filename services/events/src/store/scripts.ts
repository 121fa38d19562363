/**
 * The events service's Lua scripts: a queue's creation, appends, the end of /register and
 * deletion (per queue, on the keys and with the prelude of @zc/shared/event-queues, whose
 * header describes a queue's keys and entries), and the registry and leader lock. The poll
 * side (POLL, RELEASE, HEARTBEAT) is in that library, run by the gateway.
 */
import { QUEUE_PRELUDE as PRELUDE } from '@zc/shared/event-queues';

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
 * Appends events to many queues in one call, sending each distinct event once: a stream's
 * message reaches most of its recipients' queues byte for byte the same, and sent once per
 * queue that JSON was most of what the appender wrote to Redis (and most of Redis's parsing).
 * KEYS: meta and stream of each queue, in turn. ARGV: leader term, max events, max bytes; the
 * number of events, then per event its JetStream seq, origin, txid and JSON; then per queue one
 * argument, the 1-based numbers of its events, comma-separated, in order. Like
 * MEMBERS_OF_MANY it spans many cluster slots: one Redis, not a Cluster.
 *
 * Per queue: fencing (the queue remembers the highest leader term that appended to it and
 * refuses a lower one, a former leader that resumed after a pause, so once a newer leader has
 * written here an older one never can); events with a seq at or below the queue's last applied
 * seq are skipped (a redelivery after a leader change); events the queue's /register state
 * already holds are dropped. Returns per queue, in turn, the number appended (-1 for a dead
 * queue, -2 when this append overflowed it: more events, or more bytes of event JSON, than the
 * limits; -3 when the caller is fenced off) and the id of the queue's newest event (0 unless
 * some were appended: they are the ids just below it, since the script runs alone).
 *
 * This script runs once per delivered message for up to 200 queues, and Redis's time in it is
 * mostly per redis.call and per Lua allocation, not the commands' own work. So a queue costs
 * one HMGET (every field the checks need, the /register snapshots of the call's origins too),
 * its XADDs and at most one HSET: a vanished stream shows as XADD NOMKSTREAM's nil instead of
 * an EXISTS, and XLEN is asked only when the ids say the queue could be over its event limit
 * (it holds ids in (pruned, next_id - 1] at most).
 */
export const APPEND = `${PRELUDE}
local UNPOLLED_SHARE = ${UNPOLLED_BYTES_SHARE}
local term, maxEvents, maxBytes, nEvents = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local seqs, origins, txids, jsons = {}, {}, {}, {}
-- The fields read of each queue: its state, then the snapshot of every origin in this call.
local fields = {'term', 'last_seq', 'next_id', 'bytes', 'polled', 'overflowed', 'pruned', 'total', 'registered'}
local snapField = {}
for i = 1, nEvents do
  local base = 1 + i * 4
  seqs[i], origins[i], txids[i], jsons[i] = tonumber(ARGV[base]), ARGV[base + 1], ARGV[base + 2], ARGV[base + 3]
  local o = origins[i]
  if o ~= '' and txids[i] ~= '' and snapField[o] == nil then
    fields[#fields + 1] = 'snap:' .. o
    snapField[o] = #fields
  end
end
local out = {}
local one = {}

local function appendTo(q)
  meta, stream = KEYS[q * 2 - 1], KEYS[q * 2]
  local f = redis.call('HMGET', meta, unpack(fields))
  if f[6] then return -1, 0 end
  if not f[3] then
    redis.call('DEL', meta, stream)
    return -1, 0
  end
  local lastTerm = tonumber(f[1] or '0')
  if lastTerm > term then return -3, 0 end
  local lastSeq, nextId, bytes, polled, pruned = tonumber(f[2] or '0'), tonumber(f[3]), tonumber(f[4] or '0'), f[5], tonumber(f[7] or '-1')
  local total = tonumber(f[8] or '0')
  -- Origin and txid serve only FINISH_REGISTER: once it has run, entries go without them
  -- (two arguments and two fields less per event, on the busiest path).
  local registered = f[9]
  local newestSeq, appended = lastSeq, 0
  local list = ARGV[4 + nEvents * 4 + q]
  -- Most queues get one event: its number alone, read without a pattern or a new table.
  local numbers = one
  one[1] = tonumber(list)
  if not one[1] then
    numbers = {}
    for n in string.gmatch(list, '%d+') do numbers[#numbers + 1] = tonumber(n) end
  end
  for k = 1, #numbers do
    local n = numbers[k]
    local seq = seqs[n]
    if seq > lastSeq then
      if seq > newestSeq then newestSeq = seq end
      local at = snapField[origins[n]]
      local snap = at and txids[n] ~= '' and f[at]
      if not (snap and visible(tonumber(txids[n]), snap)) then
        total = total + #jsons[n]
        local added
        if registered then
          added = redis.call('XADD', stream, 'NOMKSTREAM', nextId .. '-1', 'e', jsons[n], 'c', total)
        else
          added = redis.call('XADD', stream, 'NOMKSTREAM', nextId .. '-1', 'e', jsons[n], 'o', origins[n], 't', txids[n], 'c', total)
        end
        if not added then
          -- The stream vanished (expiry, eviction): the queue is dead, as a missing meta says.
          redis.call('DEL', meta, stream)
          return -1, 0
        end
        nextId = nextId + 1
        bytes = bytes + #jsons[n]
        appended = appended + 1
      end
    end
  end
  if appended > 0 then
    redis.call('HSET', meta, 'term', term, 'last_seq', newestSeq, 'next_id', nextId, 'bytes', bytes, 'total', total)
  elseif newestSeq > lastSeq then
    redis.call('HSET', meta, 'term', term, 'last_seq', newestSeq)
  elseif lastTerm < term then
    redis.call('HSET', meta, 'term', term)
  end
  if appended == 0 then return 0, 0 end
  -- A queue never polled yet (a client that registered and left, or has not started polling)
  -- holds a sixteenth of the budget, so a user's unpolled queues cannot hold much of Redis for
  -- the minutes until they expire; polling clients start within seconds of /register.
  local byteLimit = polled and maxBytes or math.floor(maxBytes / UNPOLLED_SHARE)
  if bytes > byteLimit or (nextId - 1 - pruned > maxEvents and redis.call('XLEN', stream) > maxEvents) then
    redis.call('HSET', meta, 'overflowed', '1')
    redis.call('DEL', stream)
    return -2, 0
  end
  return appended, nextId - 1
end

for q = 1, #KEYS / 2 do
  out[q * 2 - 1], out[q * 2] = appendTo(q)
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
-- For the acknowledgements' byte count (see the prelude's header): the total up to the
-- acknowledged id, and the newest event deleted after it (its bytes have left 'bytes' already).
local firstKept, totalBefore, deletedAfter = nil, nil, nil
for _, entry in ipairs(redis.call('XRANGE', stream, '-', '+')) do
  local f = {}
  for j = 1, #entry[2], 2 do f[entry[2][j]] = entry[2][j + 1] end
  if alreadyInState(f['o'] or '', f['t'] or '') then
    redis.call('XDEL', stream, entry[1])
    redis.call('HINCRBY', meta, 'bytes', -#(f['e'] or ''))
    if firstKept then deletedAfter = eventId(entry[1]) end
  elseif not firstKept then
    firstKept = eventId(entry[1])
    totalBefore = f['c'] and (tonumber(f['c']) - #(f['e'] or ''))
  end
end
local nextId, total = unpack(redis.call('HMGET', meta, 'next_id', 'total'))
local acked = (firstKept or tonumber(nextId)) - 1
if not firstKept then totalBefore = tonumber(total or '0') end
local ackC = (not deletedAfter and totalBefore) and (acked .. ':' .. totalBefore) or ''
redis.call('HSET', meta, 'pruned', acked, 'registered', '1', 'ack_c', ackC, 'scan_until', deletedAfter or -1)
return acked
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
