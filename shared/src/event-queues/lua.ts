/**
 * Lua scripts on one queue's keys (KEYS[1] = meta hash, KEYS[2] = event stream): the poll
 * side (POLL, RELEASE, HEARTBEAT), run by the gateway, and the prelude the events service's
 * append-side scripts share. Each runs atomically, so a queue's ids, acknowledgements and
 * snapshot filtering never interleave with another process's writes. Every script first
 * checks the queue is alive: both keys exist (a queue whose meta or stream vanished —
 * FLUSHALL, eviction, expiry — is dead, and its leftover key is removed, so nothing ever
 * writes into a half-lost queue) and it has not overflowed. A stream entry's id is `<event id>-1`; its fields are `e` (event JSON without
 * id), `o` (origin service) and `t` (writing transaction id), the last two empty for events
 * that did not come from an outbox and left out once /register has ended (FINISH_REGISTER is
 * all that reads them), and `c`: the bytes of event JSON appended to the queue up
 * to this event, the meta's `total` after it (entries written before `c` existed lack it).
 *
 * Why `c`: the meta's `bytes` (event JSON held unacknowledged, for the per-queue budget) had
 * each acknowledgement read every event it acknowledged, only to add up their lengths. Under
 * load a poll acknowledges everything the gateway answered since its last read of Redis (up to
 * queue-tails' 200 ms: hundreds of events), and copying each event's JSON into Lua made that
 * read cost about as much Redis time as appending the event had. With `c`, the meta's `ack_c`
 * (`<pruned id>:<c of that event>`) and the entry of the newly acknowledged event give the
 * bytes freed in one read of one entry. The scan stays the way when that cannot be trusted:
 * `ack_c` missing or about another id (written by a script of an older version), an entry
 * without `c`, or events /register deleted after its acknowledged point (`scan_until`), whose
 * bytes already left `bytes` and lie inside the difference.
 */

/**
 * Helpers every per-queue script starts with (the events service's scripts too). They act on
 * the queue `meta` and `stream` name, so a script over many queues points those at each in turn.
 */
export const QUEUE_PRELUDE = `
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
-- state(), and the queue's fields named (false for a missing one) in the order named, in one
-- HMGET: each redis.call is a good part of a short script's cost, and the scripts that use
-- this run for every delivery.
local function stateWith(...)
  local names = {...}
  names[#names + 1] = 'overflowed'
  local f = redis.call('HMGET', meta, unpack(names))
  if f[#names] then return 'overflowed', f end
  if redis.call('EXISTS', meta, stream) < 2 then
    redis.call('DEL', meta, stream)
    return 'gone', f
  end
  return 'ok', f
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
-- The entry's 'c' (bytes appended up to it), or nil for an entry written without it.
local function entryTotal(entry)
  for j = #entry[2] - 1, 1, -2 do
    if entry[2][j] == 'c' then return tonumber(entry[2][j + 1]) end
  end
  return nil
end
`;

/**
 * GET /events in one round trip. ARGV: user id, last_event_id, max events, mode, now (ms),
 * extra ttl ms for a park, the id of the gateway polling, the parked poll's generation (mode
 * 'wake'), '1' if the poller is now a guest (their all_public_streams queue is removed: 'gone').
 * Modes:
 * - 'ack': acknowledge last_event_id (Zulip's pruning rules), return the events after it;
 * - 'park': the same, and if there are none, park: restart the idle clock, keep the queue
 *   alive while parked, count a new poll generation and record the gateway as the parker;
 * - 'wake': a parked poll re-reads without acknowledging; if events are there it ends, so
 *   the idle clock restarts and the parker is cleared (if it is still this poll).
 * KEYS beyond the queue's two are expected to hold the values in ARGV after the nine above
 * ('' for a missing key): the gateway's credential tokens, so that the poll's round trip is
 * also its authentication; when one differs nothing is done and the reply is {'unexpected'}.
 * Replies: {'ok', epoch, entryId, json, ...}, {'parked', epoch, generation, previous parker},
 * {'gone'}, {'overflowed'}, {'pruned', newest pruned id}, {'missing', id} or {'unexpected'}.
 */
export const POLL = `${QUEUE_PRELUDE}
if #KEYS > 2 then
  local tokens = redis.call('MGET', unpack(KEYS, 3))
  for k = 3, #KEYS do
    if (tokens[k - 2] or '') ~= ARGV[k + 7] then return {'unexpected'} end
  end
end
local st, f = stateWith('user_id', 'all_public_streams', 'pruned', 'next_id', 'epoch', 'lifespan_ms', 'poll_gen', 'parked_on', 'bytes', 'polled', 'ack_c', 'scan_until')
if st ~= 'ok' then return {st} end
local userId, allPublic, prunedId, nextId, epoch, lifespan, pollGen, parkedOn, bytes, polled, ackC, scanUntil = unpack(f)
if userId ~= ARGV[1] then return {'gone'} end
-- A guest (ARGV[9] = '1') may not read every public stream: a queue registered for them
-- before a demotion is removed at its owner's next poll, whatever it holds.
if ARGV[9] == '1' and allPublic == '1' then
  redis.call('DEL', meta, stream)
  return {'gone'}
end
local last, mode = tonumber(ARGV[2]), ARGV[4]
-- The client has polled: the queue gets its whole byte budget from now on (see APPEND).
if not polled then redis.call('HSET', meta, 'polled', '1') end
-- Hash fields written at the end, in one HSET (every path below ends through done()).
local writes = {}
local function done(reply)
  if #writes > 0 then redis.call('HSET', meta, unpack(writes)) end
  return reply
end
local pruned = tonumber(prunedId)
if mode ~= 'wake' then
  if last < pruned then return {'pruned', tostring(pruned)} end
  if last > pruned then
    if last >= tonumber(nextId) then return {'missing', tostring(last)} end
    -- The bytes freed: from the totals when they can be trusted (see the file comment), else
    -- by reading every entry acknowledged now. Either way event number last itself must be there.
    local freed, total
    local at, prunedTotal = string.match(ackC or '', '^(%-?%d+):(%d+)$')
    if at and tonumber(at) == pruned then
      local entry = redis.call('XRANGE', stream, last .. '-1', last .. '-1')[1]
      if not entry then return {'missing', tostring(last)} end
      total = entryTotal(entry)
      if total then freed = total - tonumber(prunedTotal) end
    end
    if not freed then
      local acked = redis.call('XRANGE', stream, '-', last .. '-1')
      if #acked == 0 or acked[#acked][1] ~= last .. '-1' then return {'missing', tostring(last)} end
      freed = 0
      for _, entry in ipairs(acked) do freed = freed + entryBytes(entry) end
      total = entryTotal(acked[#acked])
      if scanUntil and last < tonumber(scanUntil) then total = nil end
    end
    redis.call('XTRIM', stream, 'MINID', (last + 1) .. '-0')
    writes = {'bytes', (tonumber(bytes) or 0) - freed, 'pruned', last, 'ack_c', total and (last .. ':' .. total) or ''}
    pruned = last
  end
end
local out = {'ok', epoch}
for _, entry in ipairs(redis.call('XRANGE', stream, (math.max(last, pruned) + 1) .. '-0', '+', 'COUNT', tonumber(ARGV[3]))) do
  out[#out + 1] = entry[1]
  for j = 1, #entry[2], 2 do
    if entry[2][j] == 'e' then out[#out + 1] = entry[2][j + 1] end
  end
end
lifespan = tonumber(lifespan)
local function live(ttl, gt)
  if gt then
    redis.call('PEXPIRE', meta, ttl, 'GT')
    redis.call('PEXPIRE', stream, ttl, 'GT')
  else
    redis.call('PEXPIRE', meta, ttl)
    redis.call('PEXPIRE', stream, ttl)
  end
end
if mode == 'ack' then
  -- A poll that does not park (dont_block) is a connection too (Zulip's last_connection_time);
  -- it also ends the shorter life of a queue never polled yet (CREATE).
  writes[#writes + 1], writes[#writes + 2] = 'last_connection', ARGV[5]
  live(lifespan, true)
end
if #out > 2 then
  if mode == 'wake' then
    writes[#writes + 1], writes[#writes + 2] = 'last_connection', ARGV[5]
    -- Never shorten the life a poll parked elsewhere has just given the queue.
    live(lifespan, true)
    if pollGen == ARGV[8] then writes[#writes + 1], writes[#writes + 2] = 'parked_on', '' end
  end
  return done(out)
end
if mode == 'park' then
  live(lifespan + tonumber(ARGV[6]), false)
  local generation = (tonumber(pollGen) or 0) + 1
  writes[#writes + 1], writes[#writes + 2] = 'last_connection', ARGV[5]
  writes[#writes + 1], writes[#writes + 2] = 'poll_gen', generation
  writes[#writes + 1], writes[#writes + 2] = 'parked_on', ARGV[7]
  return done({'parked', epoch, tostring(generation), parkedOn or ''})
end
return done(out)
`;

/**
 * A parked poll ended without reading its queue (its gateway stops, its client left, or it was
 * answered with the events its wake carried): the idle clock restarts now (ARGV[1]) and the
 * parker is cleared if it is still generation ARGV[2]. Returns -1 for a dead queue.
 */
export const RELEASE = `${QUEUE_PRELUDE}
local st, f = stateWith('lifespan_ms', 'poll_gen')
if st ~= 'ok' then return -1 end
local lifespan, pollGen = tonumber(f[1]), f[2]
redis.call('PEXPIRE', meta, lifespan, 'GT')
redis.call('PEXPIRE', stream, lifespan, 'GT')
if pollGen == ARGV[2] then
  redis.call('HSET', meta, 'last_connection', ARGV[1], 'parked_on', '')
else
  redis.call('HSET', meta, 'last_connection', ARGV[1])
end
return 0
`;

/** Appends a heartbeat (it uses up an event id, as in Zulip). Returns its id, or -1 for a dead queue. */
export const HEARTBEAT = `${QUEUE_PRELUDE}
local st, f = stateWith('next_id', 'bytes', 'total')
if st ~= 'ok' then return -1 end
local id, size = tonumber(f[1] or '0'), #'{"type":"heartbeat"}'
local total = tonumber(f[3] or '0') + size
-- Without origin and txid: a poll parks, hence a heartbeat comes, only once /register has ended.
redis.call('XADD', stream, id .. '-1', 'e', '{"type":"heartbeat"}', 'c', total)
redis.call('HSET', meta, 'next_id', id + 1, 'bytes', tonumber(f[2] or '0') + size, 'total', total)
return id
`;
