package sqlplugin

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mcpgw/mcpgw/plugin"
)

// notifySQL is notify.sql, as built in; never written.
//
//go:embed notify.sql
var notifySQL string

// NotifySQL is the helper script of docs/plugins.md: the trigger function mcpgw_notify,
// which reports a table's changes on the channel NotifyChannel, and mcpgw_watch(table),
// which puts it on a table.
func NotifySQL() string { return notifySQL }

// NotifyChannel is the channel a postgres connection with listen: true LISTENs on.
const NotifyChannel = "mcpgw_changes"

// ListenApplicationName is the application_name of the listening session (it can be found
// in pg_stat_activity).
const ListenApplicationName = "mcpgw-listen"

// Reconnection backoff of a dropped listening session.
var (
	listenBackoffMin = 100 * time.Millisecond
	listenBackoffMax = 5 * time.Second
	// listenPing is how long the session waits for a notification before it checks that
	// the server is still there (a silently dropped TCP connection would wait forever).
	listenPing = 30 * time.Second
)

// listener keeps one session LISTENing on a connection's database and publishes what the
// trigger function reports as events. A dropped session is reconnected with backoff;
// changes made while it was away are not known, so after a reconnection every table of
// the connection is reported as changed (an event without id: subscribers read again).
type listener struct {
	cancel context.CancelFunc
	done   chan struct{}

	mu        sync.Mutex
	connected bool
	sessions  int // sessions established so far
	lastErr   error
}

// notification is the trigger function's payload.
type notification struct {
	Op     string  `json:"op"`
	Schema string  `json:"schema"`
	Table  string  `json:"table"`
	ID     *string `json:"id"`
	Origin *string `json:"origin"`
}

func (p *Plugin) listen(c *conn, dsn string) *listener {
	ctx, cancel := context.WithCancel(context.Background())
	l := &listener{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		backoff := listenBackoffMin
		for ctx.Err() == nil {
			established, err := l.session(ctx, p, c, dsn)
			l.mu.Lock()
			l.connected, l.lastErr = false, err
			l.mu.Unlock()
			if established {
				backoff = listenBackoffMin
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			if backoff *= 2; backoff > listenBackoffMax {
				backoff = listenBackoffMax
			}
		}
	}()
	return l
}

func (l *listener) stop() {
	l.cancel()
	<-l.done
}

// state reports whether the listening session is up, how many were established so far,
// and why the last one ended.
func (l *listener) state() (connected bool, sessions int, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.connected, l.sessions, l.lastErr
}

// session connects, LISTENs and publishes notifications until the session fails or ctx
// ends. established reports whether it got as far as listening.
func (l *listener) session(ctx context.Context, p *Plugin, c *conn, dsn string) (established bool, err error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return false, errors.New(redact(err))
	}
	cfg.RuntimeParams["application_name"] = ListenApplicationName
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	pc, err := pgx.ConnectConfig(cctx, cfg)
	cancel()
	if err != nil {
		return false, err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = pc.Close(cctx)
		cancel()
	}()
	if _, err := pc.Exec(ctx, "LISTEN "+postgres{}.quote(NotifyChannel)); err != nil {
		return false, err
	}
	l.mu.Lock()
	l.connected, l.lastErr = true, nil
	l.sessions++
	again := l.sessions > 1
	l.mu.Unlock()
	if again {
		// Whatever changed while no session listened is unknown: every table changed.
		c.mu.RLock()
		var evs []plugin.Event
		for _, t := range c.tables {
			evs = append(evs, plugin.Event{Type: plugin.EventUpdate, Connection: c.id, Key: c.key(t), Namespace: t.namespace})
		}
		c.mu.RUnlock()
		for _, e := range evs {
			p.watch.publish(e)
		}
	}
	for {
		wctx, cancel := context.WithTimeout(ctx, listenPing)
		n, err := pc.WaitForNotification(wctx)
		cancel()
		if ctx.Err() != nil {
			return true, ctx.Err()
		}
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) && !pc.IsClosed() {
				pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				err = pc.Ping(pctx)
				cancel()
				if err == nil {
					continue
				}
			}
			return true, err
		}
		if e, ok := c.event(n.Payload); ok {
			p.watch.publish(e)
		}
	}
}

// event turns a payload into an event of a table in the connection's catalogue; payloads
// that are malformed or name another table are ignored.
func (c *conn) event(payload string) (plugin.Event, bool) {
	var n notification
	if json.Unmarshal([]byte(payload), &n) != nil {
		return plugin.Event{}, false
	}
	if n.Origin != nil && *n.Origin == c.origin {
		return plugin.Event{}, false // the plugin's own write: published when it was made
	}
	var typ plugin.EventType
	switch n.Op {
	case "INSERT":
		typ = plugin.EventAdd
	case "UPDATE":
		typ = plugin.EventUpdate
	case "DELETE", "TRUNCATE":
		typ = plugin.EventDelete
	default:
		return plugin.Event{}, false
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, t := range c.tables {
		if t.namespace == n.Schema && t.name == n.Table {
			e := plugin.Event{Type: typ, Connection: c.id, Key: c.key(t), Namespace: t.namespace}
			if n.ID != nil && n.Op != "TRUNCATE" && t.pk != nil {
				e.ID = *n.ID
			}
			return e, true
		}
	}
	return plugin.Event{}, false
}
