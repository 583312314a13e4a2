// Package listen is the stateless revision's subscriptions/listen, as the gateway keeps it
// for a caller's session: what each open listen stream opted in to, and the set of a
// session's listeners that change notifications are handed to, tagged with each one's
// subscription id.
package listenstream

import (
	"encoding/json"
	"sync"

	"github.com/mcpgw/mcpgw/internal/wire"
)

// MetaSubscriptionID is the _meta member that carries a listen request's id on each of
// its notifications.
const MetaSubscriptionID = "io.modelcontextprotocol/subscriptionId"

// queue is how many notifications wait for one listener; past it, the listener closes.
const queue = 256

// Filter is what a listen request opts in to (its params' notifications).
type Filter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitempty"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitempty"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitempty"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
}

// Empty reports whether f opts in to nothing.
func (f Filter) Empty() bool {
	return !f.ToolsListChanged && !f.PromptsListChanged && !f.ResourcesListChanged && len(f.ResourceSubscriptions) == 0
}

// Listener is one open listen stream: the notifications it wants arrive on C.
type Listener struct {
	id     json.RawMessage // the listen request's id: the subscription id
	filter Filter
	uris   map[string]bool
	C      chan []byte
	done   chan struct{}
	once   sync.Once
}

// New is a listener for the listen request id, wanting what f agreed (its resource
// subscriptions included).
func New(id json.RawMessage, f Filter) *Listener {
	l := &Listener{id: id, filter: f, uris: map[string]bool{}, C: make(chan []byte, queue), done: make(chan struct{})}
	for _, uri := range f.ResourceSubscriptions {
		l.uris[uri] = true
	}
	return l
}

// Close ends the listener; Done is closed then.
func (l *Listener) Close() { l.once.Do(func() { close(l.done) }) }

// Done is closed when the listener ended (its client fell behind, or Close).
func (l *Listener) Done() <-chan struct{} { return l.done }

// wants reports whether the listener opted in to a notification.
func (l *Listener) wants(method string, params json.RawMessage) bool {
	switch method {
	case "notifications/tools/list_changed":
		return l.filter.ToolsListChanged
	case "notifications/prompts/list_changed":
		return l.filter.PromptsListChanged
	case "notifications/resources/list_changed":
		return l.filter.ResourcesListChanged
	case "notifications/resources/updated":
		var p struct {
			URI string `json:"uri"`
		}
		_ = json.Unmarshal(params, &p)
		return l.uris[p.URI]
	}
	return false // request-scoped notifications never go on a listen stream
}

// Set holds a session's listeners. The zero value is an empty set.
type Set struct {
	mu sync.Mutex
	ls map[*Listener]bool
	// told are the list_changed methods the session's own instance sent and its
	// listeners have not been told yet (FlushSaid, after the re-read).
	told map[string]bool
}

// Add and Remove put a listener in the set and take it out.
func (s *Set) Add(l *Listener) {
	s.mu.Lock()
	if s.ls == nil {
		s.ls = map[*Listener]bool{}
	}
	s.ls[l] = true
	s.mu.Unlock()
}

func (s *Set) Remove(l *Listener) {
	s.mu.Lock()
	delete(s.ls, l)
	s.mu.Unlock()
}

// Said records an upstream's list_changed for the set's listeners.
func (s *Set) Said(method string) {
	s.mu.Lock()
	if s.told == nil {
		s.told = map[string]bool{}
	}
	s.told[method] = true
	s.mu.Unlock()
}

// FlushSaid tells the listeners the list changes the upstream announced that the view
// comparison did not send (tools, others: what it sent). An upstream that says its list
// changed is believed by those who listen: their caches may hold what it replaced.
func (s *Set) FlushSaid(tools, others bool) {
	s.mu.Lock()
	told := s.told
	s.told = nil
	s.mu.Unlock()
	for method := range told {
		if (method == "notifications/tools/list_changed" && tools) || (method != "notifications/tools/list_changed" && others) {
			continue
		}
		_ = s.Send(wire.Notification(method, nil))
	}
}

// Send delivers a notification to the listeners that want it, tagged with each one's
// subscription id. A listener whose client does not keep up is closed (it opens a new
// listen), never waited for: the caller may be an upstream's reader.
func (s *Set) Send(msg []byte) error {
	var m wire.Msg
	if wire.ParseInto(msg, &m) != nil || !m.IsNotification() {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for l := range s.ls {
		if !l.wants(m.Method, m.Params) {
			continue
		}
		select {
		case l.C <- wire.Notification(m.Method, withSubscription(m.Params, l.id)):
		default:
			l.Close()
		}
	}
	return nil
}

// withSubscription adds the subscription id to params._meta.
func withSubscription(params, id json.RawMessage) json.RawMessage {
	if len(params) == 0 || string(params) == "null" {
		params = json.RawMessage(`{}`)
	}
	var out wire.Object
	var meta wire.Object
	_ = wire.MembersRaw(params, func(k, v []byte) error {
		if string(k) == "_meta" {
			_ = wire.MembersRaw(v, func(mk, mv []byte) error {
				meta.Raw(string(mk), mv)
				return nil
			})
			return nil
		}
		out.Raw(string(k), v)
		return nil
	})
	meta.Raw(MetaSubscriptionID, id)
	out.Raw("_meta", meta.Bytes())
	return out.Bytes()
}
