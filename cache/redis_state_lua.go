package cache

import "github.com/redis/go-redis/v9"

// The state store's scripts (redis_state.go has the key layout). Each
// runs at once, alone, on the primary: Redis runs no other command
// meanwhile, so what a script reads is what it writes over. A script is
// refused whole when Redis is out of memory (the #!lua line: no
// allow-oom), so an OOM writes nothing. The commit script checks every
// op first, in memory, and only then writes: no write of it can fail,
// so it applies all or nothing.

// stateLuaCommon are the functions the scripts share: the time, the
// removal of expired keys (reap), fencing tokens compared as hlc.Compare
// does.
const stateLuaCommon = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

-- a namespace's keys, from its index key ("…}:i")
local function space(i, x, s, u)
  local sp = {i = i, x = x, s = s, u = u, base = string.sub(i, 1, -2)}
  local h = redis.call('HMGET', u, 'k', 'b', 'm', 'c')
  sp.keys, sp.bytes = tonumber(h[1]) or 0, tonumber(h[2]) or 0
  sp.m, sp.c = tonumber(h[3]) or 0, tonumber(h[4]) or 0
  return sp
end

-- removes an expired key and what counts it (Redis may have removed the
-- key itself already, at its PEXPIREAT)
local function reapOne(sp, member)
  local size = tonumber(redis.call('HGET', sp.s, member)) or 0
  redis.call('HDEL', sp.s, member)
  redis.call('ZREM', sp.x, member)
  redis.call('ZREM', sp.i, member)
  redis.call('DEL', sp.base .. 'k:' .. member)
  sp.keys, sp.bytes = sp.keys - 1, sp.bytes - size
  redis.call('HSET', sp.u, 'k', sp.keys, 'b', sp.bytes)
end

-- reaps up to limit keys that expired; sp.clean when none is left
local function reap(sp, limit)
  local due = redis.call('ZRANGEBYSCORE', sp.x, '-inf', now, 'LIMIT', 0, limit)
  for _, member in ipairs(due) do reapOne(sp, member) end
  sp.clean = #due < limit
end

-- byte order, whatever the locale
local function bcmp(a, b)
  if a == b then return 0 end
  for k = 1, math.min(#a, #b) do
    local x, y = string.byte(a, k), string.byte(b, k)
    if x ~= y then
      if x < y then return -1 end
      return 1
    end
  end
  if #a < #b then return -1 end
  return 1
end

-- a fencing token as hlc.Parse reads it: MILLIS(15):COUNTER(5):NODE
local function fparse(f)
  local m, c, node = string.match(f, '^(%d+):(%d+):([^:]+)$')
  if not m or #m ~= 15 or #c ~= 5 then return nil end
  return m .. c, node
end

-- hlc.Compare; a token that does not parse is older than one that does
local function fcmp(a, b)
  local ta, na = fparse(a)
  local tb, nb = fparse(b)
  if not ta then
    if not tb then return 0 end
    return -1
  end
  if not tb then return 1 end
  local r = bcmp(ta, tb)
  if r ~= 0 then return r end
  return bcmp(na, nb)
end
`

// stateCommitScript applies a commit (redisState.call builds its keys
// and arguments).
//
//	KEYS[1]                the guard (a request's dedup key) or the marker
//	KEYS[2 … 1+4N]         each namespace's i, x, s, u
//	KEYS[2+4N … 1+4N+M]    each op's item key
//	KEYS[2+4N+M … 1+4N+M+E] the extra keys set on success (an outcome)
//	KEYS[2+4N+M+E …]       with messages (Q > 0): the outbox's stream,
//	                       its bytes counter, and (not on a cluster) the
//	                       index of the host set's streams
//	ARGV[1]  'G': KEYS[1] must hold ARGV[2] (the request's claim), and
//	         holds ARGV[3] after, until ARGV[4] (unix ms);
//	         'M': KEYS[1] must not exist, and holds the results after
//	ARGV[5], ARGV[6]  Commit.After's milliseconds and counter
//	ARGV[7], ARGV[8], ARGV[9]  N namespaces, M ops, E extra keys
//	ARGV[10], ARGV[11], ARGV[12]  Q messages, the stream's bounds:
//	         messages and bytes
//	then 13 per op: kind (s, d), namespace (1…N), key, value, TTL ms,
//	absent (1), has value (1), value, version ms, version counter,
//	fence, quota keys, quota bytes; then 2 per extra key: value, PXAT;
//	then 2 per message: its id, its body (redis_outbox.go).
//
// It returns {'OK', existed, ms, counter, …} (a result per op), or why
// not, having written nothing but the removal of keys that expired:
// {'HELD', value} (the guard holds another value, or nothing), {'DONE',
// marker}, {'CONFLICT', op, why[, ms, counter]}, {'QUOTA', op, what,
// limit}, {'FENCED', op, missing}, {'OUTBOX', what, limit} (the stream
// is full).
var stateCommitScript = redis.NewScript("#!lua\n" + stateLuaCommon + `
local mode, gk = ARGV[1], KEYS[1]
if mode == 'G' then
  local v = redis.call('GET', gk)
  if v ~= ARGV[2] then return {'HELD', v} end
else
  local v = redis.call('GET', gk)
  if v then return {'DONE', v} end
end
local N, M, E = tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9])
local W, A = 13, 12

-- the outbox's bounds, before anything is written
local Q, qk, qb, qx, qadd = tonumber(ARGV[10]), nil, nil, nil, 0
local qa = A + M * W + 2 * E
if Q > 0 then
  local kb = 1 + 4 * N + M + E
  qk, qb, qx = KEYS[kb + 1], KEYS[kb + 2], KEYS[kb + 3]
  for m = 1, Q do qadd = qadd + #ARGV[qa + 2 * m - 1] + #ARGV[qa + 2 * m] end
  if redis.call('XLEN', qk) + Q > tonumber(ARGV[11]) then return {'OUTBOX', 'messages', tonumber(ARGV[11])} end
  if (tonumber(redis.call('GET', qb)) or 0) + qadd > tonumber(ARGV[12]) then return {'OUTBOX', 'bytes', tonumber(ARGV[12])} end
end

-- the commit's versions follow every namespace's last and Commit.After
local lm, lc = tonumber(ARGV[5]), tonumber(ARGV[6])
local spaces = {}
for j = 1, N do
  local b = 1 + 4 * (j - 1)
  local sp = space(KEYS[b + 1], KEYS[b + 2], KEYS[b + 3], KEYS[b + 4])
  reap(sp, 100)
  if sp.m > lm or (sp.m == lm and sp.c > lc) then lm, lc = sp.m, sp.c end
  spaces[j] = sp
end

-- each key as the commit sees it: committed (orig), then as its ops left it
local view = {}
local function current(sp, ik, member)
  local cur = view[ik]
  if cur then return cur end
  local h = redis.call('HMGET', ik, 'v', 'm', 'c', 'x', 'f')
  if h[1] and not (h[4] and tonumber(h[4]) <= now) then
    cur = {e = true, v = h[1], m = tonumber(h[2]), c = tonumber(h[3]), x = tonumber(h[4]), f = h[5] or ''}
  else
    -- expired, removed by Redis, still counted (only when reap left some)
    if not sp.clean and redis.call('ZSCORE', sp.x, member) then reapOne(sp, member) end
    cur = {e = false, f = ''}
  end
  cur.sp, cur.member, cur.orig, cur.origx = sp, member, cur.e, cur.x
  view[ik] = cur
  return cur
end

local res = {'OK'}
for o = 1, M do
  local a = A + (o - 1) * W
  local kind, sp, member = ARGV[a + 1], spaces[tonumber(ARGV[a + 2])], ARGV[a + 3]
  local value, ttl = ARGV[a + 4], tonumber(ARGV[a + 5])
  local cAbsent, cHas, cValue = ARGV[a + 6] == '1', ARGV[a + 7] == '1', ARGV[a + 8]
  local cm, cc = tonumber(ARGV[a + 9]), tonumber(ARGV[a + 10])
  local fence, qk, qb = ARGV[a + 11], tonumber(ARGV[a + 12]), tonumber(ARGV[a + 13])
  local ik = KEYS[1 + 4 * N + o]
  local cur = current(sp, ik, member)
  if cur.e and cur.f ~= '' then
    if fence == '' then return {'FENCED', o, 1} end
    if fcmp(fence, cur.f) < 0 then return {'FENCED', o, 0} end
  end
  if cAbsent and cHas then
    if cur.e and cur.v ~= cValue then return {'CONFLICT', o, 2} end
  elseif cAbsent then
    if cur.e then return {'CONFLICT', o, 1} end
  elseif cHas then
    if not cur.e then return {'CONFLICT', o, 3} end
    if cur.v ~= cValue then return {'CONFLICT', o, 2} end
  end
  if cm ~= 0 or cc ~= 0 then
    if not cur.e then return {'CONFLICT', o, 4} end
    if cur.m ~= cm or cur.c ~= cc then return {'CONFLICT', o, 5, cur.m, cur.c} end
  end
  if kind == 'd' and not cur.e then
    res[#res + 1] = 0; res[#res + 1] = 0; res[#res + 1] = 0
  else
    local existed = cur.e
    if existed then sp.keys, sp.bytes = sp.keys - 1, sp.bytes - #member - #cur.v end
    if lc >= 65535 then lm, lc = lm + 1, 0 else lc = lc + 1 end
    if lm < now then lm, lc = now, 0 end
    sp.touched = true
    if kind == 'd' then
      cur.e, cur.v, cur.x, cur.f = false, nil, nil, ''
    else
      local nf = fence
      if existed and cur.f ~= '' and (fence == '' or fcmp(fence, cur.f) < 0) then nf = cur.f end
      local grows = not existed or #value > #cur.v
      sp.keys, sp.bytes = sp.keys + 1, sp.bytes + #member + #value
      if not existed and sp.keys > qk then return {'QUOTA', o, 'keys', qk} end
      if grows and sp.bytes > qb then return {'QUOTA', o, 'bytes', qb} end
      cur.e, cur.v, cur.m, cur.c, cur.f = true, value, lm, lc, nf
      if ttl > 0 then cur.x = now + ttl else cur.x = nil end
    end
    cur.dirty = true
    res[#res + 1] = existed and 1 or 0; res[#res + 1] = lm; res[#res + 1] = lc
  end
end

-- every check passed: write
for ik, cur in pairs(view) do
  if cur.dirty then
    local sp, member = cur.sp, cur.member
    if cur.origx then
      redis.call('ZREM', sp.x, member)
      redis.call('HDEL', sp.s, member)
    end
    if cur.e then
      if cur.orig then redis.call('DEL', ik) else redis.call('ZADD', sp.i, 0, member) end
      redis.call('HSET', ik, 'v', cur.v, 'm', cur.m, 'c', cur.c)
      if cur.f ~= '' then redis.call('HSET', ik, 'f', cur.f) end
      if cur.x then
        redis.call('HSET', ik, 'x', cur.x)
        redis.call('PEXPIREAT', ik, cur.x)
        redis.call('ZADD', sp.x, cur.x, member)
        redis.call('HSET', sp.s, member, #member + #cur.v)
      end
    elseif cur.orig then
      redis.call('DEL', ik)
      redis.call('ZREM', sp.i, member)
    end
  end
end
for j = 1, N do
  local sp = spaces[j]
  if sp.touched then redis.call('HSET', sp.u, 'k', sp.keys, 'b', sp.bytes, 'm', lm, 'c', lc) end
end
if mode == 'G' then
  redis.call('SET', gk, ARGV[3], 'PXAT', ARGV[4])
else
  redis.call('SET', gk, table.concat(res, ','), 'PXAT', ARGV[4])
end
local ek, ea = 1 + 4 * N + M, A + M * W
for e = 1, E do
  redis.call('SET', KEYS[ek + e], ARGV[ea + 2 * e - 1], 'PXAT', ARGV[ea + 2 * e])
end
if Q > 0 then
  if redis.call('EXISTS', qk) == 0 then redis.call('XGROUP', 'CREATE', qk, 'cmdhost', '0', 'MKSTREAM') end
  for m = 1, Q do redis.call('XADD', qk, '*', 'i', ARGV[qa + 2 * m - 1], 'b', ARGV[qa + 2 * m]) end
  redis.call('INCRBY', qb, qadd)
  if qx then redis.call('SADD', qx, qk) end
end
return res`)

// stateAbortScript settles a commit whose answer was lost: its marker
// KEYS[1] keeps the results it wrote, or, when it has not run, says
// "ABORTED" (until ARGV[1], unix ms), so that it never will. It returns
// the marker. A marker found is written again, unchanged, so that a WAIT
// after the script covers it on this primary whichever connection runs
// it (redis_confirm_write.go): the commit counts once a replica has it.
var stateAbortScript = redis.NewScript(`#!lua
local v = redis.call('GET', KEYS[1])
if v then
  redis.call('SET', KEYS[1], v, 'KEEPTTL')
  return v
end
redis.call('SET', KEYS[1], 'ABORTED', 'PXAT', ARGV[1])
return 'ABORTED'`)

// stateListScript lists a namespace's keys (KEYS: its i, x, s, u) from
// ARGV[1] to ARGV[2] (ZRANGEBYLEX bounds), ARGV[3] at most: it first
// removes up to 1000 keys that expired, then skips those that expired
// since, 10,000 at most. It returns {cut, key, …}: cut is 1 when it
// stopped skipping before it had ARGV[3] keys (more may follow: the next
// list removes the next 1000).
var stateListScript = redis.NewScript("#!lua\n" + stateLuaCommon + `
local sp = space(KEYS[1], KEYS[2], KEYS[3], KEYS[4])
reap(sp, 1000)
local want = tonumber(ARGV[3])
local out, scanned, min = {0}, 0, ARGV[1]
while #out - 1 < want do
  if scanned >= 10000 then
    out[1] = 1
    break
  end
  local page = redis.call('ZRANGEBYLEX', sp.i, min, ARGV[2], 'LIMIT', 0, want - #out + 1)
  if #page == 0 then break end
  for _, m in ipairs(page) do
    scanned = scanned + 1
    local h = redis.call('HMGET', sp.base .. 'k:' .. m, 'm', 'x')
    if h[1] and not (h[2] and tonumber(h[2]) <= now) then out[#out + 1] = m end
  end
  min = '(' .. page[#page]
end
return out`)
