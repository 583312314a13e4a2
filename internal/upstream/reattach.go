package upstream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// Reattaching to a streamable HTTP session (docs/tasks.md, "Tasks across restarts and
// replicas"): an upstream of a session revision keeps its MCP tasks per session, so a
// task is polled in the session that created it. The connection that opened the session
// may be gone (the gateway restarted) or another process's (a replica): a reattached
// connection speaks in that session again, by its Mcp-Session-Id and protocol version,
// without an initialize of its own.

// sessionGone is the error of a reattached connection whose session the upstream no
// longer knows: a constant, compared with errors.Is.
type sessionGone string

func (e sessionGone) Error() string { return string(e) }

// ErrSessionGone is a request on a reattached connection that the upstream answered as
// for a session it does not know (HTTP 404, or 400 naming the session): it restarted,
// or ended or expired the session. It comes wrapped in ErrClosed.
const ErrSessionGone sessionGone = "the upstream no longer knows the session"

// SessionRef is the streamable HTTP session the connection speaks in: its Mcp-Session-Id
// and protocol version. Both are "" for other transports, for a server that gives no
// session id, and for the stateless revision (which has no sessions).
func (c *Conn) SessionRef() (id, version string) {
	st, ok := c.tr.(*streamTransport)
	if !ok {
		return "", ""
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.version == StatelessVersion || st.sessionID == "" {
		return "", ""
	}
	return st.sessionID, st.version
}

// KeepSession keeps the connection's upstream session past the connection until until:
// a Close before then sends no DELETE, so that what the session runs (a task) can still
// be reached by a reattached connection, from this process after the instance ended or
// from the next one. A later until extends it; an earlier one is ignored. Other
// transports have nothing to keep.
func (c *Conn) KeepSession(until time.Time) {
	st, ok := c.tr.(*streamTransport)
	if !ok {
		return
	}
	st.mu.Lock()
	if until.After(st.keepUntil) {
		st.keepUntil = until
	}
	st.mu.Unlock()
}

// Reattach is a connection that speaks in the streamable HTTP session sessionID, of
// protocol version, at o's URL (with o's headers, TLS settings and authorizer), which
// another connection opened: it sends no initialize and opens no GET stream, and its
// Close never ends the session (no DELETE). A request the upstream answers as for a
// session it does not know fails with ErrSessionGone, and the connection ends. Only a
// streamable HTTP upstream has sessions to reattach to.
func (d *Dialer) Reattach(o Options, sessionID, version string) (*Conn, error) {
	if o.Transport != "streamable_http" {
		return nil, errors.New("only a streamable HTTP upstream session can be reattached to (server " + o.Name + " is " + o.Transport + ")")
	}
	if sessionID == "" {
		return nil, errors.New("no upstream session to reattach to")
	}
	log := o.Log
	if log == nil {
		log = slog.Default()
	}
	tr, err := d.transport(context.Background(), o, log)
	if err != nil {
		return nil, err
	}
	st := tr.(*streamTransport)
	st.sessionID, st.version, st.reattached = sessionID, version, true
	c := newConn(o.Name, tr, o.Handler, log)
	c.busy = d.Busy
	c.version = d.EffectiveVersion()
	c.ProtocolVersion = version
	if err := c.start(); err != nil {
		_ = tr.close()
		return nil, err
	}
	return c, nil
}

// keeps reports whether close must leave the session to the upstream: the connection is
// reattached (the session is another's), or a task keeps it (KeepSession).
func (t *streamTransport) keeps() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.reattached || time.Now().Before(t.keepUntil)
}

// lostSession ends a reattached transport whose upstream answered status and body as for
// a session it does not know, and returns the error of the request; nil when the answer
// says nothing of the kind, or the transport is not reattached (an instance's own
// session that is lost ends it as errorAnswer says).
func (t *streamTransport) lostSession(status int, body []byte) error {
	if !t.reattached {
		return nil
	}
	if status != http.StatusNotFound && (status != http.StatusBadRequest || !strings.Contains(strings.ToLower(string(body)), "session")) {
		return nil
	}
	t.die(ErrSessionGone)
	return fmt.Errorf("%w: %w", ErrClosed, ErrSessionGone)
}
