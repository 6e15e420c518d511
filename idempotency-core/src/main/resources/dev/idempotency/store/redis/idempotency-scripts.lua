-- Every Redis script of the idempotency store, in one file (read by dev.idempotency.store.redis.RedisScripts).
--
-- A line "-- @common" starts code that is put in front of every script; a line "-- @script <name>" starts
-- one script, which runs up to the next marker. Text before the first marker (this header) is not sent.
--
-- One record is one hash, KEYS[1]. Its fields:
--   scope, key          the record's identity, kept for people reading the keyspace
--   fingerprint         SHA-256 (hex) of the request that created the record
--   operation           operation name, for diagnostics
--   state               IN_PROGRESS or COMPLETED
--   owner               owner token (IN_PROGRESS only)
--   lease_until_ms      end of the owner's lease, Unix ms by Redis's clock (IN_PROGRESS only)
--   expires_at_ms       end of the record, Unix ms by Redis's clock; the key carries the same PEXPIREAT
--   created_ms          when the record was created, Unix ms by Redis's clock (kept by a take-over); for operators
--   response            the StoredResponseCodec bytes (COMPLETED only)
--
-- Time comes from redis.call('TIME') so that every node judges leases by one clock. Calling TIME before a
-- write needs script effects replication (the default since Redis 5, the only mode since Redis 7).

-- @common
local function now_ms()
	local time = redis.call('TIME')
	return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end

-- Integers as plain digits: Lua numbers are doubles, which are exact for Unix milliseconds.
local function digits(number)
	return string.format('%d', number)
end

local function to_map(flat)
	local map = {}
	for i = 1, #flat, 2 do
		map[flat[i]] = flat[i + 1]
	end
	return map
end

-- Redis deletes a key only once its expiry is strictly in the past; the store's contract says a record has
-- expired from its expiry instant on, so the scripts also test the stored expiry.
local function is_live(expires_at_ms, now)
	return expires_at_ms ~= nil and expires_at_ms ~= false and tonumber(expires_at_ms) > now
end

-- The fence of complete, release and heartbeat: a live IN_PROGRESS record owned by this token.
local function is_owned(key, owner, now)
	local fields = redis.call('HMGET', key, 'state', 'owner', 'expires_at_ms')
	return fields[1] == 'IN_PROGRESS' and fields[2] == owner and is_live(fields[3], now)
end

-- @script reserve
-- ARGV: fingerprint, operation, owner token, lease ms, retention ms, scope, key.
-- Returns {'acquired'}, {'taken_over'} or {'existing', <HGETALL of the record>}.
local now = now_ms()
local flat = redis.call('HGETALL', KEYS[1])
local record = to_map(flat)
if not is_live(record.expires_at_ms, now) then
	if #flat > 0 then
		-- expired in this very millisecond but not yet removed by Redis: start from an empty hash
		redis.call('DEL', KEYS[1])
	end
	local expires_at = now + tonumber(ARGV[5])
	redis.call('HSET', KEYS[1], 'scope', ARGV[6], 'key', ARGV[7], 'fingerprint', ARGV[1], 'operation', ARGV[2],
		'state', 'IN_PROGRESS', 'owner', ARGV[3], 'lease_until_ms', digits(now + tonumber(ARGV[4])),
		'expires_at_ms', digits(expires_at), 'created_ms', digits(now))
	-- a key's expiry is set only where its record is created (here and in record_completed): later writes
	-- are HSET/HDEL, which keep it
	redis.call('PEXPIREAT', KEYS[1], digits(expires_at))
	return {'acquired'}
end
if record.state == 'IN_PROGRESS' and tonumber(record.lease_until_ms) <= now and record.fingerprint == ARGV[1] then
	-- the owner stopped heartbeating: the same request takes over, the record's expiry stays as it was
	redis.call('HSET', KEYS[1], 'owner', ARGV[3], 'lease_until_ms', digits(now + tonumber(ARGV[4])))
	return {'taken_over'}
end
return {'existing', flat}

-- @script complete
-- ARGV: owner token, encoded response. Returns 1 when completed, 0 when not owned.
local now = now_ms()
if not is_owned(KEYS[1], ARGV[1], now) then
	return 0
end
redis.call('HSET', KEYS[1], 'state', 'COMPLETED', 'response', ARGV[2])
redis.call('HDEL', KEYS[1], 'owner', 'lease_until_ms')
return 1

-- @script record_completed
-- Record-after-success mode: the operation already ran, without a reservation.
-- ARGV: fingerprint, operation, encoded response, retention ms, scope, key.
-- Returns {'recorded'} or {'existing', <HGETALL of the record>}.
local now = now_ms()
local flat = redis.call('HGETALL', KEYS[1])
if is_live(to_map(flat).expires_at_ms, now) then
	-- completed or in progress, whatever its fingerprint: the first answer stands
	return {'existing', flat}
end
if #flat > 0 then
	-- expired in this very millisecond but not yet removed by Redis: start from an empty hash
	redis.call('DEL', KEYS[1])
end
local expires_at = now + tonumber(ARGV[4])
-- the fields a completed reservation ends with, so that find and reserve read it alike
redis.call('HSET', KEYS[1], 'scope', ARGV[5], 'key', ARGV[6], 'fingerprint', ARGV[1], 'operation', ARGV[2],
	'state', 'COMPLETED', 'response', ARGV[3], 'expires_at_ms', digits(expires_at), 'created_ms', digits(now))
redis.call('PEXPIREAT', KEYS[1], digits(expires_at))
return {'recorded'}

-- @script release
-- ARGV: owner token. Returns 1 when deleted, 0 when not owned.
local now = now_ms()
if not is_owned(KEYS[1], ARGV[1], now) then
	return 0
end
redis.call('DEL', KEYS[1])
return 1

-- @script heartbeat
-- ARGV: owner token, lease ms. Returns 1 when the lease was extended, 0 when not owned.
local now = now_ms()
if not is_owned(KEYS[1], ARGV[1], now) then
	return 0
end
redis.call('HSET', KEYS[1], 'lease_until_ms', digits(now + tonumber(ARGV[2])))
return 1

-- @script find
-- No ARGV. Returns the HGETALL of a live record, or an empty list.
local now = now_ms()
local flat = redis.call('HGETALL', KEYS[1])
if not is_live(to_map(flat).expires_at_ms, now) then
	return {}
end
return flat

-- @script remove
-- An operator's removal (the idempotency Actuator endpoint): deletes a live record whatever its state and owner.
-- No ARGV. Returns 1 when deleted, 0 when no live record was there.
local now = now_ms()
if not is_live(redis.call('HGET', KEYS[1], 'expires_at_ms'), now) then
	return 0
end
redis.call('DEL', KEYS[1])
return 1
