package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Credentials in Redis: the record (JSON) at mcpgw:cred:<kind>:<server>:<subject>, with
// a Redis TTL at its Expires (PEXPIREAT) so that expired flows vanish by themselves, and
// its <server>:<subject> in the set mcpgw:creds:<kind> for ListCredentials. Parts are
// escaped as in every other key. Writes that must see what is stored run as Lua scripts,
// which Redis runs atomically.
const (
	// casScript stores ARGV[2] at KEYS[1] if the stored record's rev is ARGV[1] (0: no
	// record), expiring at ARGV[3] ms (0: never), and adds ARGV[4] to the index KEYS[2].
	// It answers 1 when it stored the record, 0 when the stored rev differs.
	casScript = `local cur = redis.call("GET", KEYS[1])
local rev = 0
if cur then rev = tonumber(cjson.decode(cur)["rev"]) or -1 end
if rev ~= tonumber(ARGV[1]) then return 0 end
redis.call("SET", KEYS[1], ARGV[2])
if ARGV[3] ~= "0" then redis.call("PEXPIREAT", KEYS[1], ARGV[3]) end
redis.call("SADD", KEYS[2], ARGV[4])
return 1`

	// takeScript returns the record at KEYS[1] (nil: none) and deletes it, and its id
	// ARGV[1] from the index KEYS[2].
	takeScript = `local v = redis.call("GET", KEYS[1])
if v then redis.call("DEL", KEYS[1]) end
redis.call("SREM", KEYS[2], ARGV[1])
return v`

	// unindexScript removes from the index KEYS[1] each id ARGV[i] whose record KEYS[i+1]
	// is gone (expired): checked in the script, so that a record created meanwhile stays
	// listed.
	unindexScript = `local n = 0
for i, id in ipairs(ARGV) do
  if redis.call("EXISTS", KEYS[i + 1]) == 0 then n = n + redis.call("SREM", KEYS[1], id) end
end
return n`
)

// redisScripts are the Lua scripts a Redis store runs (EVALSHA, loaded on first use).
type redisScripts struct {
	cas, take, unindex, unlock *redis.Script
}

func newRedisScripts() redisScripts {
	return redisScripts{cas: redis.NewScript(casScript), take: redis.NewScript(takeScript),
		unindex: redis.NewScript(unindexScript), unlock: redis.NewScript(unlockScript)}
}

// credID is a credential's id in its kind's index set (and the tail of its key).
func credID(server, subject string) string {
	return keyEscaper.Replace(server) + ":" + keyEscaper.Replace(subject)
}

func credIndexRedis(kind string) string { return "mcpgw:creds:" + keyEscaper.Replace(kind) }

func credKeyRedis(kind, id string) string { return "mcpgw:cred:" + keyEscaper.Replace(kind) + ":" + id }

// expireAtMillis is a Redis expiry for t: 0 for none, else t in Unix milliseconds rounded
// up (Redis never drops a record the store's own clock still serves), and at least 1.
func expireAtMillis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	ms := t.UnixMilli()
	if t.Sub(time.UnixMilli(ms)) > 0 {
		ms++
	}
	return max(ms, 1)
}

func (s *redisCredentials) PutCredential(c *Credential, rev int64) (int64, error) {
	if err := checkPut(c, rev); err != nil {
		return 0, err
	}
	n := nextCredential(c, rev, time.Now())
	b, err := json.Marshal(n)
	if err != nil {
		return 0, err
	}
	id := credID(c.Server, c.Subject)
	ctx, cancel := opCtx()
	defer cancel()
	ok, err := s.scripts.cas.Run(ctx, s.c, []string{credKeyRedis(c.Kind, id), credIndexRedis(c.Kind)},
		rev, b, expireAtMillis(c.Expires), id).Int()
	if err != nil {
		return 0, s.wrap("put credential", err)
	}
	if ok != 1 {
		return 0, ErrConflict
	}
	return n.Rev, nil
}

func (s *redisCredentials) GetCredential(kind, server, subject string) (*Credential, error) {
	c := new(Credential)
	if err := s.getJSON("get credential", credKeyRedis(kind, credID(server, subject)), c); err != nil {
		return nil, err
	}
	if c.expired(time.Now()) {
		return nil, ErrNotFound
	}
	return c, nil
}

func (s *redisCredentials) DeleteCredential(kind, server, subject string) error {
	id := credID(server, subject)
	return s.deleteIndexed("delete credential", credIndexRedis(kind), id, credKeyRedis(kind, id))
}

// ListCredentials reads kind's index set and the records it names. Ids whose record has
// expired are dropped from the set on the way (best effort: List answers regardless).
func (s *redisCredentials) ListCredentials(kind string) ([]*Credential, error) {
	var out []*Credential
	now := time.Now()
	keyOf := func(id string) string { return credKeyRedis(kind, id) }
	gone, err := s.listIndexed("list credentials", credIndexRedis(kind), keyOf, func(id string, v []byte) error {
		c := new(Credential)
		if err := json.Unmarshal(v, c); err != nil {
			return fmt.Errorf("credential %q: %w", id, err)
		}
		if !c.expired(now) {
			out = append(out, c)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.unindexGone(kind, gone)
	sortCredentials(out)
	return out, nil
}

// unindexGone drops from kind's index the ids whose records are gone (expired), in chunks
// of listChunk. Best effort: a failure leaves them for the next List.
func (s *redisCredentials) unindexGone(kind string, gone []string) {
	for len(gone) > 0 {
		n := min(len(gone), listChunk)
		keys := []string{credIndexRedis(kind)}
		args := make([]any, n)
		for i, id := range gone[:n] {
			keys = append(keys, credKeyRedis(kind, id))
			args[i] = id
		}
		gone = gone[n:]
		ctx, cancel := opCtx()
		err := s.scripts.unindex.Run(ctx, s.c, keys, args...).Err()
		cancel()
		if err != nil {
			return
		}
	}
}

func (s *redisCredentials) TakeCredential(kind, server, subject string) (*Credential, error) {
	id := credID(server, subject)
	ctx, cancel := opCtx()
	defer cancel()
	b, err := s.scripts.take.Run(ctx, s.c, []string{credKeyRedis(kind, id), credIndexRedis(kind)}, id).Text()
	if errors.Is(err, redis.Nil) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, s.wrap("take credential", err)
	}
	c := new(Credential)
	if err := json.Unmarshal([]byte(b), c); err != nil {
		return nil, fmt.Errorf("redis take credential %s:%s: %w", kind, id, err)
	}
	if c.expired(time.Now()) {
		return nil, ErrNotFound
	}
	return c, nil
}
