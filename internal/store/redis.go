// size: being split (issue 41)
package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
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
// size: being split (issue 41)
type Redis struct {
	c       *redis.Client
	url     string // redacted, for errors
	closed  atomic.Bool
	scripts redisScripts
}

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

func sessionKey(id string) string { return "mcpgw:session:" + keyEscaper.Replace(id) }
func taskKey(id string) string    { return "mcpgw:task:" + keyEscaper.Replace(id) }
func convKeyRedis(a, id string) string {
	return "mcpgw:conv:" + keyEscaper.Replace(a) + ":" + keyEscaper.Replace(id)
}

// configID is an entry's id in the mcpgw:configs set (and the tail of its key).
func configID(kind, name string) string {
	return keyEscaper.Replace(kind) + ":" + keyEscaper.Replace(name)
}
func configKeyRedis(id string) string { return "mcpgw:config:" + id }

// pinID is a pin's id in the mcpgw:pins set (and the tail of its key).
func pinID(server, kind, name string) string {
	return keyEscaper.Replace(server) + ":" + keyEscaper.Replace(kind) + ":" + keyEscaper.Replace(name)
}
func pinKeyRedis(id string) string { return "mcpgw:pin:" + id }

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
	s := &Redis{c: redis.NewClient(opt), url: shown, scripts: newRedisScripts()}
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
func (s *Redis) wrap(op string, err error) error {
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

func (s *Redis) Put(r *Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return s.putIndexed("put session", keySessions, r.ID, sessionKey(r.ID), b)
}

func (s *Redis) Get(id string) (*Record, error) {
	r := new(Record)
	if err := s.getJSON("get session", sessionKey(id), r); err != nil {
		return nil, err
	}
	return r, nil
}

func (s *Redis) Delete(id string) error {
	return s.deleteIndexed("delete session", keySessions, id, sessionKey(id))
}

func (s *Redis) List() ([]*Record, error) {
	var out []*Record
	_, err := s.listIndexed("list sessions", keySessions, sessionKey, func(id string, v []byte) error {
		r := new(Record)
		if err := json.Unmarshal(v, r); err != nil {
			return fmt.Errorf("session %q: %w", id, err)
		}
		out = append(out, r)
		return nil
	})
	return out, err
}

func (s *Redis) PutTask(t *Task) error {
	b, err := json.Marshal(t)
	if err != nil {
		return err
	}
	return s.putIndexed("put task", keyTasks, t.ID, taskKey(t.ID), b)
}

func (s *Redis) GetTask(id string) (*Task, error) {
	t := new(Task)
	if err := s.getJSON("get task", taskKey(id), t); err != nil {
		return nil, err
	}
	return t, nil
}

func (s *Redis) DeleteTask(id string) error {
	return s.deleteIndexed("delete task", keyTasks, id, taskKey(id))
}

func (s *Redis) ListTasks() ([]*Task, error) {
	var out []*Task
	_, err := s.listIndexed("list tasks", keyTasks, taskKey, func(id string, v []byte) error {
		t := new(Task)
		if err := json.Unmarshal(v, t); err != nil {
			return fmt.Errorf("task %q: %w", id, err)
		}
		out = append(out, t)
		return nil
	})
	return out, err
}

func (s *Redis) GetConversation(agent, id string) (*Conversation, error) {
	c := new(Conversation)
	if err := s.getJSON("get conversation", convKeyRedis(agent, id), c); err != nil {
		return nil, err
	}
	return c, nil
}

func (s *Redis) PutConversation(c *Conversation) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	ctx, cancel := opCtx()
	defer cancel()
	return s.wrap("put conversation", s.c.Set(ctx, convKeyRedis(c.Agent, c.ID), b, 0).Err())
}

func (s *Redis) PutConfig(e *ConfigEntry) error {
	if !validConfigKey(e.Kind, e.Name) {
		return errBadConfigKey
	}
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	id := configID(e.Kind, e.Name)
	return s.putIndexed("put config", keyConfigs, id, configKeyRedis(id), b)
}

func (s *Redis) GetConfig(kind, name string) (*ConfigEntry, error) {
	e := new(ConfigEntry)
	if err := s.getJSON("get config", configKeyRedis(configID(kind, name)), e); err != nil {
		return nil, err
	}
	return e, nil
}

func (s *Redis) DeleteConfig(kind, name string) error {
	id := configID(kind, name)
	return s.deleteIndexed("delete config", keyConfigs, id, configKeyRedis(id))
}

func (s *Redis) ListConfig() ([]*ConfigEntry, error) {
	var out []*ConfigEntry
	_, err := s.listIndexed("list config", keyConfigs, configKeyRedis, func(id string, v []byte) error {
		e := new(ConfigEntry)
		if err := json.Unmarshal(v, e); err != nil {
			return fmt.Errorf("config entry %q: %w", id, err)
		}
		out = append(out, e)
		return nil
	})
	sortEntries(out)
	return out, err
}

func (s *Redis) PutPin(p *Pin) error {
	if !validPin(p) {
		return errBadPinKey
	}
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	id := pinID(p.Server, p.Kind, p.Name)
	return s.putIndexed("put pin", keyPins, id, pinKeyRedis(id), b)
}

func (s *Redis) GetPin(server, kind, name string) (*Pin, error) {
	p := new(Pin)
	if err := s.getJSON("get pin", pinKeyRedis(pinID(server, kind, name)), p); err != nil {
		return nil, err
	}
	return p, nil
}

func (s *Redis) DeletePin(server, kind, name string) error {
	id := pinID(server, kind, name)
	return s.deleteIndexed("delete pin", keyPins, id, pinKeyRedis(id))
}

func (s *Redis) ListPins() ([]*Pin, error) {
	var out []*Pin
	_, err := s.listIndexed("list pins", keyPins, pinKeyRedis, func(id string, v []byte) error {
		p := new(Pin)
		if err := json.Unmarshal(v, p); err != nil {
			return fmt.Errorf("pin %q: %w", id, err)
		}
		out = append(out, p)
		return nil
	})
	sortPins(out)
	return out, err
}

// Close closes the client. A Subscribe still running ends.
func (s *Redis) Close() error {
	s.closed.Store(true)
	return s.c.Close()
}

func (s *Redis) getJSON(op, key string, v any) error {
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
func (s *Redis) putIndexed(op, index, id, key string, b []byte) error {
	ctx, cancel := opCtx()
	defer cancel()
	_, err := s.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, key, b, 0)
		p.SAdd(ctx, index, id)
		return nil
	})
	return s.wrap(op, err)
}

func (s *Redis) deleteIndexed(op, index, id, key string) error {
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
func (s *Redis) listIndexed(op, index string, keyOf func(string) string, each func(id string, v []byte) error) (gone []string, err error) {
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

// Bus carries events between gateway replicas that share a store.
type Bus interface {
	// Publish sends msg to every replica's Subscribe, this one's included.
	Publish(ctx context.Context, msg []byte) error
	// Subscribe calls fn with each message until ctx ends; it blocks (run it in its own
	// goroutine). fn runs on Subscribe's goroutine, one message at a time. Messages sent
	// while the subscription is down (Redis unreachable) are lost: pub/sub does not
	// queue them.
	Subscribe(ctx context.Context, fn func(msg []byte))
}

// BusOf returns the bus of s: Redis pub/sub for a Redis store (seen through NewCached),
// else a bus that does nothing (one gateway process: nobody else to tell).
func BusOf(s Store) Bus {
	for {
		switch v := s.(type) {
		case *Redis:
			return v
		case interface{ Unwrap() Store }:
			s = v.Unwrap()
		default:
			return nopBus{}
		}
	}
}

type nopBus struct{}

func (nopBus) Publish(context.Context, []byte) error { return nil }

func (nopBus) Subscribe(ctx context.Context, _ func([]byte)) { <-ctx.Done() }

// Publish sends msg on mcpgw:events, bounded by ctx and by opTimeout.
func (s *Redis) Publish(ctx context.Context, msg []byte) error {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	return s.wrap("publish", s.c.Publish(ctx, EventsChannel, msg).Err())
}

// Subscription timing; variables so that tests can shorten them.
var (
	subPingEvery  = 15 * time.Second       // idle time before checking the connection
	subBackoffMin = 100 * time.Millisecond // wait before resubscribing, doubled up to Max
	subBackoffMax = 5 * time.Second
)

// Subscribe receives mcpgw:events until ctx ends (or the store is closed). After a lost
// connection it subscribes again, waiting between attempts from subBackoffMin doubling
// up to subBackoffMax (reset once a subscription is confirmed). A connection idle for
// subPingEvery is pinged; one that stays silent after the ping is dropped and replaced.
func (s *Redis) Subscribe(ctx context.Context, fn func(msg []byte)) {
	backoff := subBackoffMin
	for ctx.Err() == nil {
		if s.subscribeOnce(ctx, fn) {
			backoff = subBackoffMin
		}
		if s.closed.Load() {
			return
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(2*backoff, subBackoffMax)
	}
}

// subscribeOnce runs one subscription until it fails or ctx ends; it reports whether the
// server confirmed it.
func (s *Redis) subscribeOnce(ctx context.Context, fn func(msg []byte)) (confirmed bool) {
	ps := s.c.Subscribe(ctx)
	defer ps.Close()
	// Closing the PubSub is what interrupts a blocked read when ctx ends.
	stop := context.AfterFunc(ctx, func() { ps.Close() })
	defer stop()
	sctx, cancel := context.WithTimeout(ctx, opTimeout)
	err := ps.Subscribe(sctx, EventsChannel)
	cancel()
	if err != nil {
		return false
	}
	pinged := false
	for {
		m, err := ps.ReceiveTimeout(ctx, subPingEvery)
		if err != nil {
			var ne net.Error
			if ctx.Err() == nil && !pinged && errors.As(err, &ne) && ne.Timeout() {
				// Idle: ask for a pong; if nothing comes back by the next timeout, the
				// connection is dead.
				pctx, cancel := context.WithTimeout(ctx, opTimeout)
				err = ps.Ping(pctx)
				cancel()
				if err == nil {
					pinged = true
					continue
				}
			}
			return confirmed
		}
		pinged = false
		switch m := m.(type) {
		case *redis.Subscription:
			if m.Kind == "subscribe" {
				confirmed = true
			}
		case *redis.Message:
			fn([]byte(m.Payload))
		}
	}
}
