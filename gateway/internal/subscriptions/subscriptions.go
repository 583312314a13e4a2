// Package subscriptions keeps a session's resource subscriptions: the server each
// subscribed URI is on (whose updates reach the session), how many of a stateless caller's
// listeners name each URI, and the watches held on upstreams of the stateless revision.
package subscriptions

import "sync"

// Set is one session's subscriptions. The zero value is ready.
type Set struct {
	mu        sync.Mutex
	closed    bool
	servers   map[string]string // URI → server
	listeners map[string]int    // URI → listeners naming it
	watches   map[string]func() // URI → stop of its watch
}

// Subscribe notes the session's subscription to uri on server.
func (st *Set) Subscribe(uri, server string) {
	st.mu.Lock()
	if st.servers == nil {
		st.servers = map[string]string{}
	}
	st.servers[uri] = server
	st.mu.Unlock()
}

// Unsubscribe forgets the subscription to uri and returns the server it was on.
func (st *Set) Unsubscribe(uri string) (server string, ok bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	server, ok = st.servers[uri]
	delete(st.servers, uri)
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
// the gateway); first reports that none named it before.
func (st *Set) Listen(uri, server string) (first bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
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
	return st.listeners[uri] == 1
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
	return true, server
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

// Close ends the set: it returns the stops of every watch, and keeps no watch after.
func (st *Set) Close() []func() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.closed = true
	var stops []func()
	for _, stop := range st.watches {
		stops = append(stops, stop)
	}
	st.watches = nil
	return stops
}
