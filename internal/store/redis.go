package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis is a Store in a Redis server, shared by several gateway replicas. It is also their
// Bus (pub/sub on channel mcpgw:events).
//
// Keys:
//
//	mcpgw:session:<id>          a session record (JSON)
//	mcpgw:task:<id>             a task (JSON)
//	mcpgw:conv:<agent>:<id>     a conversation (JSON)
//	mcpgw:config:<kind>:<name>  an admin API config entry (JSON)
//	mcpgw:pin:<server>:<kind>:<name>
//	                            an integrity record of a served definition (JSON)
//	mcpgw:cred:<kind>:<server>:<subject>
//	                            a sealed upstream credential (JSON), with a Redis TTL
//	                            when it expires
//	mcpgw:sessions, mcpgw:tasks, mcpgw:configs, mcpgw:pins, mcpgw:creds:<kind>
//	                            sets of the ids above, for List, ListTasks, ListConfig,
//	                            ListPins and ListCredentials
//	mcpgw:lock:<name>           a held Lock: its holder's random token, with a TTL
//
// Parts of keys are escaped ('%' and ':' as %25 and %3A), so that no agent or id can
// collide with another. Records have no Redis TTL (the gateway reaps idle sessions),
// except credentials that expire and locks.
//
// Every call is bounded by opTimeout. A server that cannot be reached (down, timed out) is
// an error wrapping ErrUnavailable; go-redis dials again on later calls, so the store
// recovers by itself when the server comes back (about a second later at most).
//
// The store is one part per concern of the Store interface, each over the shared
// connection and in its own file: sessions, tasks and conversations (sessions_redis.go),
// config entries and pins (entries_redis.go), credentials (credentials_redis.go), locks
// (lock.go), and the replicas' Bus (bus.go).
type Redis struct {
	*redisConn
	redisSessions
	redisConfigEntries
	redisPins
	redisCredentials
	redisLocks
	redisBus
}

// redisConn is what the parts of a Redis store share: the client, the server's name for
// errors, and the Lua scripts.
type redisConn struct {
	c       *redis.Client
	url     string // redacted, for errors
	closed  atomic.Bool
	scripts redisScripts
}

// redisSessions, redisConfigEntries, redisPins, redisCredentials, redisLocks and redisBus
// are the parts of a Redis store, each over its connection.
type (
	redisSessions      struct{ *redisConn }
	redisConfigEntries struct{ *redisConn }
	redisPins          struct{ *redisConn }
	redisCredentials   struct{ *redisConn }
	redisLocks         struct{ *redisConn }
	redisBus           struct{ *redisConn }
)

const (
	// opTimeout bounds every Store call (and each round trip of List).
	opTimeout = 2 * time.Second
	// EventsChannel is the pub/sub channel of the replicas' Bus.
	EventsChannel = "mcpgw:events"

	keySessions = "mcpgw:sessions"
	keyTasks    = "mcpgw:tasks"
	keyConfigs  = "mcpgw:configs"
	keyPins     = "mcpgw:pins"
	listChunk   = 500
)

var keyEscaper = strings.NewReplacer("%", "%25", ":", "%3A")

// OpenRedis connects to the server at rawURL: redis://[user:password@]host:port/db,
// rediss://… (TLS) or unix:///path/to/socket?db=N; go-redis's query options (dial_timeout,
// pool_size, …) are honoured. It pings the server once: an unreachable server is an error
// (wrapping ErrUnavailable) naming the URL without its password.
func OpenRedis(rawURL string) (*Redis, error) {
	quietRedisLog.Do(func() { redis.SetLogger(slogRedis{}) })
	u, err := url.Parse(rawURL)
	if err != nil {
		// url.Error repeats the whole URL, password included: keep only the reason.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("redis store %s: invalid URL: %v", redactSpec(rawURL), err)
	}
	shown := u.Redacted()
	opt, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("redis store %s: %v", shown, err)
	}
	// Fail fast rather than hang: a request waits at most opTimeout on the store. URL
	// query options win over these defaults.
	q := u.Query()
	if !q.Has("dial_timeout") {
		opt.DialTimeout = time.Second
	}
	if !q.Has("read_timeout") {
		opt.ReadTimeout = time.Second
	}
	if !q.Has("write_timeout") {
		opt.WriteTimeout = time.Second
	}
	if !q.Has("pool_timeout") {
		opt.PoolTimeout = time.Second
	}
	if !q.Has("max_retries") {
		// One retry covers a pooled connection the server closed (restart).
		opt.MaxRetries = 1
	}
	opt.DialerRetries = 2
	opt.ContextTimeoutEnabled = true
	rc := &redisConn{c: redis.NewClient(opt), url: shown, scripts: newRedisScripts()}
	s := &Redis{redisConn: rc, redisSessions: redisSessions{rc}, redisConfigEntries: redisConfigEntries{rc},
		redisPins: redisPins{rc}, redisCredentials: redisCredentials{rc}, redisLocks: redisLocks{rc}, redisBus: redisBus{rc}}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	if err := s.c.Ping(ctx).Err(); err != nil {
		s.c.Close()
		return nil, s.wrap("ping", err)
	}
	return s, nil
}

// quietRedisLog sends go-redis's own log lines (a "failed to dial" for every attempt
// while the server is down) to slog at debug level: the store returns those errors to its
// callers, which log them as they see fit.
var quietRedisLog sync.Once

type slogRedis struct{}

func (slogRedis) Printf(ctx context.Context, format string, v ...any) {
	slog.Default().DebugContext(ctx, "redis: "+fmt.Sprintf(format, v...))
}

// wrap classifies an error of the client: connection-level failures (refused, timed
// out, closed) and server replies meaning "not now" (LOADING, READONLY, auth lost, …) wrap
// ErrUnavailable; other server replies (a bug of ours, say WRONGTYPE) are returned as
// they are. The message names the server (password hidden) and the operation.
func (s *redisConn) wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	if re, ok := errors.AsType[redis.Error](err); ok && !transientReply(re.Error()) {
		return fmt.Errorf("redis %s (%s): %w", s.url, op, err)
	}
	return fmt.Errorf("%w: redis %s (%s): %w", ErrUnavailable, s.url, op, err)
}

func transientReply(msg string) bool {
	for _, p := range []string{"LOADING", "READONLY", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN", "BUSY", "NOAUTH", "WRONGPASS"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

func opCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), opTimeout)
}

// Close closes the client. A Subscribe still running ends.
func (s *Redis) Close() error {
	s.closed.Store(true)
	return s.c.Close()
}

func (s *redisConn) getJSON(op, key string, v any) error {
	ctx, cancel := opCtx()
	defer cancel()
	b, err := s.c.Get(ctx, key).Bytes()
	if errors.Is(err, redis.Nil) {
		return ErrNotFound
	}
	if err != nil {
		return s.wrap(op, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("redis %s %s: %w", op, key, err)
	}
	return nil
}

// putIndexed sets key and adds id to the index set, atomically (MULTI/EXEC).
func (s *redisConn) putIndexed(op, index, id, key string, b []byte) error {
	ctx, cancel := opCtx()
	defer cancel()
	_, err := s.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, key, b, 0)
		p.SAdd(ctx, index, id)
		return nil
	})
	return s.wrap(op, err)
}

func (s *redisConn) deleteIndexed(op, index, id, key string) error {
	ctx, cancel := opCtx()
	defer cancel()
	_, err := s.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, key)
		p.SRem(ctx, index, id)
		return nil
	})
	return s.wrap(op, err)
}

// listIndexed reads the ids of the index set, then their values in chunks. Each round
// trip has its own opTimeout. An id whose key is gone (deleted meanwhile, or expired) is
// skipped, and returned in gone.
func (s *redisConn) listIndexed(op, index string, keyOf func(string) string, each func(id string, v []byte) error) (gone []string, err error) {
	c, cancel := opCtx()
	ids, err := s.c.SMembers(c, index).Result()
	cancel()
	if err != nil {
		return nil, s.wrap(op, err)
	}
	for len(ids) > 0 {
		n := min(len(ids), listChunk)
		chunk := ids[:n]
		ids = ids[n:]
		keys := make([]string, len(chunk))
		for i, id := range chunk {
			keys[i] = keyOf(id)
		}
		c, cancel := opCtx()
		vals, err := s.c.MGet(c, keys...).Result()
		cancel()
		if err != nil {
			return nil, s.wrap(op, err)
		}
		for i, v := range vals {
			str, ok := v.(string)
			if !ok {
				gone = append(gone, chunk[i])
				continue
			}
			if err := each(chunk[i], []byte(str)); err != nil {
				return nil, err
			}
		}
	}
	return gone, nil
}
