package mcptask

import (
	"crypto/rand"
	"encoding/base64"
	"sync"

	"github.com/mcpgw/mcpgw/internal/upstream"
)

// An upstream of a session revision keeps its tasks per instance (a stdio process, a
// streamable HTTP session): a task's requests must reach the instance that created it.
// Its route names that instance by an id made in this process, and an instance found
// live here by that id serves them; once it is gone, a streamable HTTP session is
// reattached to (upstream.Dialer.Reattach) and any other instance is lost with its tasks.

// liveInstances are the instances of this process that created tasks, by id, each until
// it ends. One entry per live connection: bounded by the registry's instance limits.
type liveInstances struct {
	mu    sync.Mutex
	ids   map[*upstream.Conn]string
	conns map[string]*upstream.Conn
}

// Instance is the id by which the routes of c's tasks name it: made the first time c
// creates a task, and forgotten when c ends. It says nothing of the upstream and is never
// made twice (128 random bits), so an id from another process is never found live here.
func (t *Table) Instance(c *upstream.Conn) string {
	l := &t.live
	l.mu.Lock()
	defer l.mu.Unlock()
	if id, ok := l.ids[c]; ok {
		return id
	}
	select {
	case <-c.Done():
		return "" // ended already: no instance to name
	default:
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := base64.RawURLEncoding.EncodeToString(b[:])
	if l.ids == nil {
		l.ids, l.conns = map[*upstream.Conn]string{}, map[string]*upstream.Conn{}
	}
	l.ids[c], l.conns[id] = id, c
	go func() {
		<-c.Done()
		l.mu.Lock()
		delete(l.ids, c)
		delete(l.conns, id)
		l.mu.Unlock()
	}()
	return id
}

// Live is the instance id names while it lives in this process; nil otherwise (it ended,
// or it is another process's).
func (t *Table) Live(id string) *upstream.Conn {
	if id == "" {
		return nil
	}
	l := &t.live
	l.mu.Lock()
	c := l.conns[id]
	l.mu.Unlock()
	if c == nil {
		return nil
	}
	select {
	case <-c.Done():
		return nil
	default:
		return c
	}
}
