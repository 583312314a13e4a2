// Package subscriptions keeps a session's resource subscriptions: the server each
// subscribed URI is on (whose updates reach the session), how many of a stateless caller's
// listeners name each URI, and the watches held on upstreams of the stateless revision.
package subscriptions

import "sync"

// Set is one session's subscriptions. The zero value is ready.
//
// A URI is held while it is subscribed or a listener names it; the URIs held are what the
// limits count (Quota), once each however many listeners name one.
type Set struct {
	mu        sync.Mutex
	closed    bool
	servers   map[string]string // URI → server
	listeners map[string]int    // URI → listeners naming it
	watches   map[string]func() // URI → stop of its watch
	held      map[string]bool   // URIs counted against the limits
	// agents and agent are where the held URIs are counted for the session's agent (set by
	// the first Quota that counts one).
	agents *Agents
	agent  string
}

// Subscribe notes the session's subscription to uri on server, within q.
func (st *Set) Subscribe(uri, server string, q Quota) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if err := st.hold(uri, q); err != nil {
		return err
	}
	if st.servers == nil {
		st.servers = map[string]string{}
	}
	st.servers[uri] = server
	return nil
}

// Unsubscribe forgets the subscription to uri and returns the server it was on.
func (st *Set) Unsubscribe(uri string) (server string, ok bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	server, ok = st.servers[uri]
	delete(st.servers, uri)
	st.release(uri)
	return server, ok
}

// Subscribed reports whether the session is subscribed to uri on server.
func (st *Set) Subscribed(uri, server string) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	s, ok := st.servers[uri]
	return ok && s == server
}

// Listen counts one more listener naming uri, subscribed on server ("": a URI served in
// the gateway), within q; first reports that none named it before.
func (st *Set) Listen(uri, server string, q Quota) (first bool, err error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if err := st.hold(uri, q); err != nil {
		return false, err
	}
	if st.listeners == nil {
		st.listeners = map[string]int{}
	}
	st.listeners[uri]++
	if server != "" {
		if st.servers == nil {
			st.servers = map[string]string{}
		}
		st.servers[uri] = server
	}
	return st.listeners[uri] == 1, nil
}

// Unlisten counts one listener fewer naming uri; the last one also ends the subscription,
// and last and the server it was on say so.
func (st *Set) Unlisten(uri string) (last bool, server string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.listeners[uri]--
	server = st.servers[uri]
	if st.listeners[uri] > 0 {
		return false, server
	}
	delete(st.listeners, uri)
	delete(st.servers, uri)
	st.release(uri)
	return true, server
}

// Held is how many URIs the session holds (what the limits count).
func (st *Set) Held() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.held)
}

// hold counts uri against q unless it is held already (under st.mu).
func (st *Set) hold(uri string, q Quota) error {
	if st.held[uri] || st.closed {
		return nil // a closed set counts nothing: its session is gone
	}
	if err := q.CheckURI(uri); err != nil {
		return err
	}
	if q.PerSession > 0 && len(st.held) >= q.PerSession {
		return &LimitError{Setting: SettingPerSession, Limit: q.PerSession}
	}
	if st.agents == nil {
		st.agents, st.agent = q.Agents, q.Agent
	}
	if !st.agents.take(st.agent, q.PerAgent) {
		return &LimitError{Setting: SettingPerAgent, Limit: q.PerAgent, Agent: st.agent}
	}
	if st.held == nil {
		st.held = map[string]bool{}
	}
	st.held[uri] = true
	return nil
}

// release stops counting uri once nothing holds it (under st.mu).
func (st *Set) release(uri string) {
	if !st.held[uri] || st.listeners[uri] > 0 {
		return
	}
	if _, ok := st.servers[uri]; ok {
		return
	}
	delete(st.held, uri)
	st.agents.give(st.agent, 1)
}

// TakeWatch removes and returns the stop of uri's watch (nil: none).
func (st *Set) TakeWatch(uri string) func() {
	st.mu.Lock()
	defer st.mu.Unlock()
	stop := st.watches[uri]
	delete(st.watches, uri)
	return stop
}

// Watch keeps stop as the end of uri's watch; false once the set is closed (the caller
// stops the watch itself).
func (st *Set) Watch(uri string, stop func()) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return false
	}
	if st.watches == nil {
		st.watches = map[string]func(){}
	}
	st.watches[uri] = stop
	return true
}

// Close ends the set: it returns the stops of every watch, keeps no watch after, and gives
// the agent back the URIs the session held.
func (st *Set) Close() []func() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.closed = true
	var stops []func()
	for _, stop := range st.watches {
		stops = append(stops, stop)
	}
	st.watches = nil
	st.agents.give(st.agent, len(st.held))
	st.held = nil
	return stops
}
