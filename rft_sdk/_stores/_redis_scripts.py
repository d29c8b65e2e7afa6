"""Lua scripts of ``RedisStore`` (each runs atomically on the Redis server).

Keys under the store's prefix ``P``: ``P r:<trace_id>`` (hash: generation,
item, state, created, ...), ``P c:<trace_id>`` (list: one record JSON per
call, appended), ``P s:<trace_id>`` (list: one response JSON ``[call_id, status, body]`` per call),
``P idx`` (sorted set: trace_id by expiry), ``P lru`` (sorted set: trace_id
by save order, from the counter ``P seq``),
``P rel`` (sorted set: trace_id by release deadline), ``P nb`` (hash:
trace_id -> bytes), ``P bytes`` (total), ``P stats`` (hash: evicted, expired,
released), ``P g:<trace_id>`` and ``P gidx`` (grades), ``P t:<trace_id>``
(tombstones), ``P e:<trace_id>`` (rollouts evicted in progress, kept ``ttl_s``), ``P l:<trace_id>`` (locks).
Every write script is safe to run twice (redis-py retries a command whose
connection broke, e.g. across a Redis restart, and the first run may have
happened): ``SAVE`` recognises its records already appended (or its rewrite's
fresh generation), ``LOCK`` a lock it already holds. A tool call on a rollout
this process wrote last is one round trip: ``SAVE`` with the stamp
(``generation|ver|calls``) of the copy the process holds, which writes only if that
is still the stored copy, live, ungraded and unlocked (``RedisStore.lock_for_call``).
Otherwise it is two: ``LOCKLOAD`` (take the rollout's lock, read the grade
tombstone and the rollout, in one script) and ``SAVE`` with the lock's owner
(check the lock is still held, write, release it).

LOCK_EFFECTS: locks are kept in Redis's memory only (``redis.set_repl(redis.REPL_NONE)``
around their writes: not in the append-only file, not replicated), so taking
and releasing one costs no ``fsync``; a call makes one durable write, its
``SAVE``. A lock lost with a restart (or a failover) is safe: every write under
a lock checks the lock is still its owner's, and the one-round-trip ``SAVE``
checks the stamp, so a holder that lost its lock writes nothing (its call
answers 503 and is retried). The rollout hash's ``iv`` names the item last
written, so a load returns the item's bytes only to a process that does not
hold that version. Deadlines are seconds of the
store's clock, passed in by the client; Redis key expiry (``PEXPIRE``) is
only a garbage collector for keys nobody sweeps.
"""

from __future__ import annotations

__all__ = ["COMMON", "GRADE", "LOAD", "LOCK", "LOCKLOAD", "RELEASE", "RENEW", "SAVE", "STATS", "UNLOCK"]

#: Shared helpers: delete a rollout (counting the cause), sweep due ones, report counters. A script including
#: them first sets ``ARG`` (its arguments: ``ARGV``, or the decoded header of one that packs them).
COMMON = r"""
local P = ARG[1]
local function drop(tid, cause)
  if redis.call('ZREM', P .. 'idx', tid) == 0 then return end
  redis.call('ZREM', P .. 'rel', tid)
  redis.call('ZREM', P .. 'lru', tid)
  redis.call('DEL', P .. 'r:' .. tid, P .. 'c:' .. tid, P .. 's:' .. tid)
  local nb = tonumber(redis.call('HGET', P .. 'nb', tid) or '0')
  redis.call('HDEL', P .. 'nb', tid)
  redis.call('DECRBY', P .. 'bytes', nb)
  redis.call('HINCRBY', P .. 'stats', cause, 1)
end
local function sweep(now)
  for _, tid in ipairs(redis.call('ZRANGEBYSCORE', P .. 'rel', '-inf', now, 'LIMIT', 0, 100)) do
    local exp = tonumber(redis.call('ZSCORE', P .. 'idx', tid) or '0')
    local rel = tonumber(redis.call('ZSCORE', P .. 'rel', tid))
    if exp < rel then drop(tid, 'expired') else drop(tid, 'released') end
  end
  for _, tid in ipairs(redis.call('ZRANGEBYSCORE', P .. 'idx', '-inf', now, 'LIMIT', 0, 100)) do
    drop(tid, 'expired')
  end
  for _, tid in ipairs(redis.call('ZRANGEBYSCORE', P .. 'gidx', '-inf', now, 'LIMIT', 0, 100)) do
    redis.call('ZREM', P .. 'gidx', tid)
    redis.call('DEL', P .. 'g:' .. tid)
  end
end
local function counters(status, count, total)  -- (count, total: ZCARD idx and bytes, when just read)
  local s = redis.call('HMGET', P .. 'stats', 'evicted', 'expired', 'released')
  return {status, count or redis.call('ZCARD', P .. 'idx'), tonumber(s[1] or '0'), tonumber(s[2] or '0'),
          tonumber(s[3] or '0'), total or tonumber(redis.call('GET', P .. 'bytes') or '0')}
end
"""

#: ARGV: a header, item_json ('' = unchanged), state_json, records..., then responses... The header is a JSON
#: array of strings (one argument instead of twenty-one: redis-py packs each argument in Python): P, trace_id, now,
#: ttl_s, gc_ms, max_rollouts, max_total_bytes, generation, rewrite (0/1), '', '', created_at, calls, calls_bytes,
#: nbytes, item version (written with the item), owner of the rollout's lock ('' = none), release it (0/1),
#: n_records, expected stamp ('' = none), writer, sweep (1: sweep every due rollout first; 0: only this one's
#: expiry and release are checked, and the counters of drops answered are -1: not read), expiry ahead (1: with an
#: expected stamp, the client's copy expires later than ``now`` by more than a second, so its expiry is not read). With an owner: nothing is written unless the lock is still this
#: owner's ('LOST'), and with release the lock is deleted after the write. With an expected stamp (a call made in
#: one round trip, without the lock): nothing is written unless the stored copy is still the one of that stamp
#: ``generation|version|calls``, live, not graded and not locked by anyone ('STALE'; the count of calls also
#: tells a write of a version that keeps no ``ver``, e.g. a replica not yet upgraded). Every write increments the
#: rollout's ``ver`` and names its ``writer`` (a process's store: ``w``). Returns counters('OK') with the new
#: stamp's version appended, counters('REWRITE') (nothing written, the lock kept: the stored copy is another
#: generation), counters('LOST') or counters('STALE').
SAVE = r"""
local ARG = cjson.decode(ARGV[1])
ARG[10], ARG[11] = ARGV[2], ARGV[3]
""" + COMMON + r"""
local tid, now, ttl, gc = ARG[2], tonumber(ARG[3]), tonumber(ARG[4]), ARG[5]
local meta, calls, resp = P .. 'r:' .. tid, P .. 'c:' .. tid, P .. 's:' .. tid
local owner, lock = ARG[17], P .. 'l:' .. tid
local swept = ARG[22] ~= '0'  -- (below)
local function ours()
  local v = redis.call('GET', lock)
  return v and string.sub(v, 1, #owner + 1) == owner .. '|'
end
local ver  -- the version this save wrote (below)
local function done(count, total)
  -- the counters of drops are read with a sweep (or an eviction) only; else -1 each: the client keeps its last
  local reply = (swept or not count) and counters('OK', count, total) or {'OK', count, -1, -1, -1, total}
  reply[7] = ver or redis.call('HGET', meta, 'ver') or ''
  if owner ~= '' and ARG[18] == '1' and ours() then
    redis.set_repl(redis.REPL_NONE)  -- locks live in memory only (LOCK_EFFECTS)
    redis.call('DEL', lock)
  end
  return reply
end
local function deadline_ahead(value)  -- a value 'owner|deadline' or 'digest|deadline' whose deadline is ahead
  return value and tonumber(string.match(value, '|([^|]*)$')) > now
end
-- the sweep of every due rollout runs when the client asks (ARG[22]: once per SWEEP_EVERY_S of its clock; an older
-- client sends no flag: always), or before an eviction; this rollout's own expiry or release is checked every time,
-- as that sweep would (a due rollout is dropped first, so nothing is appended to it)
if swept then sweep(now) end
local expect = ARG[20]
-- a one-round-trip call's save whose copy expires ahead of now by the client's reckoning (ARG[23] = '1': the
-- expiry it read or wrote with its stamp) needs no read of it: only SAVE moves a rollout's expiry, and every SAVE
-- changes the stamp checked below (a copy dropped since has no hash: no stamp); a release still reads it
local rel = redis.call('ZSCORE', P .. 'rel', tid)
local exp = (expect ~= '' and ARG[23] == '1' and not swept and not rel) and math.huge
  or redis.call('ZSCORE', P .. 'idx', tid)
if not swept and exp and (tonumber(exp) <= now or (rel and tonumber(rel) <= now)) then
  drop(tid, (rel and tonumber(rel) <= now and tonumber(exp) >= tonumber(rel)) and 'released' or 'expired')
  exp, rel = false, false
end
local n = tonumber(ARG[19])
local first = 4
local stored = redis.call('HMGET', meta, 'gen', 'ver', 'calls')
local stored_gen = stored[1]
if ARG[9] == '0' and stored_gen ~= ARG[8] then return counters(expect == '' and 'REWRITE' or 'STALE') end
-- this very save ran already (redis-py resent it after a lost reply): its last record is the stored last one
-- (another writer's record differs: its call_id and times), or its rewrite's fresh generation is there
local applied = stored_gen == ARG[8] and tonumber(stored[3] or redis.call('LLEN', calls)) == tonumber(ARG[13])
  and (n == 0 or redis.call('LINDEX', calls, -1) == ARGV[first + n - 1])
if applied and (n > 0 or ARG[9] == '1') then return done() end
if expect ~= '' then  -- a call made without the lock: only onto the copy it read, which nobody holds or graded
  local held = redis.call('MGET', lock, P .. 't:' .. tid)  -- its lock and its grade tombstone
  if not exp or tonumber(exp) <= now or (rel and tonumber(rel) <= now)
      or (stored_gen or '') .. '|' .. (stored[2] or '') .. '|' .. (stored[3] or '') ~= expect
      or deadline_ahead(held[1]) or deadline_ahead(held[2]) then
    return counters('STALE')
  end
end
if owner ~= '' and not ours() then
  if applied and redis.call('HGET', meta, 'state') == ARG[11] then return counters('OK') end  -- ran, released
  return counters('LOST')
end
if ARG[9] == '1' then redis.call('DEL', calls, resp) end
if expect == '' then redis.call('DEL', P .. 'e:' .. tid) end  -- (the stamp's copy is live: not evicted)
-- the garbage collector's expiry (PEXPIRE) is renewed on the three keys once half of it has passed (or on a
-- rewrite), and set on a list this save creates: not three more writes to propagate on every call
local renew = ARG[9] == '1' or redis.call('PTTL', meta) < tonumber(gc) / 2
local function push(key, from, to)
  local created = false
  for i = from, to, 500 do
    local pushed = math.min(i + 499, to) - i + 1
    if redis.call('RPUSH', key, unpack(ARGV, i, i + pushed - 1)) == pushed and i == from then created = true end
  end
  if created and not renew then redis.call('PEXPIRE', key, gc) end
end
push(calls, first, first - 1 + n)
push(resp, first + n, #ARGV)
ver = (tonumber(stored[2]) or 0) + 1  -- (read above, in this script: what HINCRBY would write)
if ARG[10] ~= '' then
  redis.call('HSET', meta, 'gen', ARG[8], 'state', ARG[11], 'created', ARG[12], 'calls', ARG[13], 'cb', ARG[14],
             'w', ARG[21], 'ver', ver, 'item', ARG[10], 'iv', ARG[16])
else
  redis.call('HSET', meta, 'gen', ARG[8], 'state', ARG[11], 'created', ARG[12], 'calls', ARG[13], 'cb', ARG[14],
             'w', ARG[21], 'ver', ver)
end
if renew then
  redis.call('PEXPIRE', meta, gc)
  redis.call('PEXPIRE', calls, gc)  -- a no-op (nothing written) on a list not there
  redis.call('PEXPIRE', resp, gc)
end
local old = tonumber(redis.call('HGET', P .. 'nb', tid) or '0')
redis.call('HSET', P .. 'nb', tid, ARG[15])
local total = redis.call('INCRBY', P .. 'bytes', tonumber(ARG[15]) - old)  -- (the new total)
redis.call('ZADD', P .. 'idx', now + ttl, tid)
redis.call('ZADD', P .. 'lru', redis.call('INCR', P .. 'seq'), tid)
local max_n, max_b = tonumber(ARG[6]), tonumber(ARG[7])
local count = redis.call('ZCARD', P .. 'idx')
if not swept and (count > max_n or total > max_b) then  -- due rollouts go first, as a sweep before it would
  sweep(now)
  swept = true
  count, total = redis.call('ZCARD', P .. 'idx'), tonumber(redis.call('GET', P .. 'bytes') or '0')
end
while count > max_n or total > max_b do
  local oldest = redis.call('ZRANGE', P .. 'lru', 0, 1)
  local victim = oldest[1]
  if victim == tid then victim = oldest[2] end
  if not victim then break end
  drop(victim, 'evicted')
  if redis.call('EXISTS', P .. 't:' .. victim) == 0 then  -- lost in progress: say so for ttl_s (LOAD)
    redis.call('SET', P .. 'e:' .. victim, now + ttl, 'PX', gc)
  end
  count, total = redis.call('ZCARD', P .. 'idx'), tonumber(redis.call('GET', P .. 'bytes') or '0')
end
return done(count, total)  -- (the counts read last: no command since changed them)
"""

#: Reads one rollout: ``load(P, trace_id, now, cached generation ('' = none), first record, first response,
#: cached item version ('' = none))``. Returns {status, tombstone ('' = none)} with status 'none' or 'evicted'
#: (evicted in progress, not graded), or {'ok', tombstone, {generation, item ('' = the cached version is
#: current), state, created, calls bytes, item version, version, writer, expiry, calls}, records from, responses from,
#: record from, response from}; the "from"s are 0 (everything) when the cached generation is not the stored one.
_LOAD_FN = r"""
local function load(P, tid, now, cgen, cf, rf, civ)
  local tomb = redis.call('GET', P .. 't:' .. tid) or ''
  local exp = redis.call('ZSCORE', P .. 'idx', tid)
  local rel = redis.call('ZSCORE', P .. 'rel', tid)
  if not exp then
    local lost = redis.call('GET', P .. 'e:' .. tid)
    local graded = tomb ~= '' and tonumber(string.match(tomb, '|([^|]*)$')) > now
    if lost and tonumber(lost) > now and not graded then return {'evicted', tomb} end
    return {'none', tomb}
  end
  if tonumber(exp) <= now or (rel and tonumber(rel) <= now) then return {'none', tomb} end
  local meta = P .. 'r:' .. tid
  local m = redis.call('HMGET', meta, 'gen', 'iv', 'state', 'created', 'cb', 'ver', 'w', 'calls')
  if not m[1] then return {'none', tomb} end
  local iv = m[2] or ''
  local item = ''
  if iv == '' or iv ~= civ then item = redis.call('HGET', meta, 'item') or '{}' end
  if m[1] ~= cgen or cf > redis.call('LLEN', P .. 'c:' .. tid) or rf > redis.call('LLEN', P .. 's:' .. tid) then
    cf, rf = 0, 0
  end
  return {'ok', tomb, {m[1], item, m[3], m[4], m[5], iv, m[6] or '', m[7] or '', exp, m[8] or ''},
          redis.call('LRANGE', P .. 'c:' .. tid, cf, -1),
          redis.call('LRANGE', P .. 's:' .. tid, rf, -1), cf, rf}
end
"""

#: ARGV: P, trace_id, now, cached generation, first record, first response, cached item version. See _LOAD_FN.
LOAD = _LOAD_FN + r"""
return load(ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4], tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7])
"""

#: ARGV: P, trace_id, now, after_s. Returns counters.
RELEASE = "local ARG = ARGV\n" + COMMON + r"""
local tid, now, after = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
sweep(now)
if after <= 0 then drop(tid, 'released')
elseif redis.call('ZSCORE', P .. 'idx', tid) then redis.call('ZADD', P .. 'rel', now + after, tid) end
return counters('OK')
"""

#: ARGV: P, trace_id, now, ttl_s, gc_ms, max_rollouts, grader, record_json.
GRADE = "local ARG = ARGV\n" + COMMON + r"""
local tid, now = ARGV[2], tonumber(ARGV[3])
sweep(now)
redis.call('HSET', P .. 'g:' .. tid, ARGV[7], ARGV[8])
redis.call('PEXPIRE', P .. 'g:' .. tid, ARGV[5])
redis.call('ZADD', P .. 'gidx', now + tonumber(ARGV[4]), tid)
while redis.call('ZCARD', P .. 'gidx') > tonumber(ARGV[6]) do
  local oldest = redis.call('ZPOPMIN', P .. 'gidx')
  redis.call('DEL', P .. 'g:' .. oldest[1])
end
return 1
"""

#: ARGV: P, now. Sweeps, returns counters.
STATS = "local ARG = ARGV\n" + COMMON + r"""
sweep(tonumber(ARGV[2]))
return counters('OK')
"""

#: Takes a lock: ``take(key, owner, now, lease_s, gc_ms, takeover_value ('' = none))`` returns false when
#: taken (or already this owner's: a retried LOCK), else the current value ``owner|deadline``.
_LOCK_FN = r"""
local function take(key, owner, now, lease, gc, takeover)
  redis.set_repl(redis.REPL_NONE)  -- LOCK_EFFECTS
  local v = redis.call('GET', key)
  if v and string.sub(v, 1, #owner + 1) == owner .. '|' then v = nil end  -- ours already (a retried LOCK)
  if v and v ~= takeover then
    local deadline = tonumber(string.match(v, '|([^|]*)$'))
    if deadline and deadline > now then return v end
  end
  redis.call('SET', key, owner .. '|' .. (now + lease), 'PX', gc)
  return false
end
"""

#: KEYS: lock key. ARGV: owner, now, lease_s, gc_ms, takeover_value ('' = none).
#: Returns 'OK' when taken, else the current value ``owner|deadline``.
LOCK = _LOCK_FN + r"""
return take(KEYS[1], ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4], ARGV[5]) or 'OK'
"""

#: The lock, the grade tombstone and the rollout in one round trip. KEYS: lock key. ARGV: one header, a JSON
#: array of strings: owner, now, lease_s, gc_ms, takeover_value, then LOAD's ARGV (P, trace_id, now, cached
#: generation, first record, first response, cached item version). Returns {'locked', current value} when held
#: elsewhere, else what LOAD returns.
LOCKLOAD = _LOCK_FN + _LOAD_FN + r"""
local A = cjson.decode(ARGV[1])
local held = take(KEYS[1], A[1], tonumber(A[2]), tonumber(A[3]), A[4], A[5])
if held then return {'locked', held} end
return load(A[6], A[7], tonumber(A[8]), A[9], tonumber(A[10]), tonumber(A[11]), A[12])
"""

#: KEYS: lock key. ARGV: owner. Returns 1 when this owner still held it.
UNLOCK = r"""
redis.set_repl(redis.REPL_NONE)  -- LOCK_EFFECTS
local v = redis.call('GET', KEYS[1])
if v and string.sub(v, 1, #ARGV[1] + 1) == ARGV[1] .. '|' then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
"""

#: KEYS: lock key. ARGV: owner, now, lease_s, gc_ms. Extends the lease when this owner still holds it (1), else 0.
RENEW = r"""
redis.set_repl(redis.REPL_NONE)  -- LOCK_EFFECTS
local v = redis.call('GET', KEYS[1])
if v and string.sub(v, 1, #ARGV[1] + 1) == ARGV[1] .. '|' then
  redis.call('SET', KEYS[1], ARGV[1] .. '|' .. (tonumber(ARGV[2]) + tonumber(ARGV[3])), 'PX', ARGV[4])
  return 1
end
return 0
"""
