package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/wire"
	"github.com/mcpgw/mcpgw/plugin"
)

// Plugin resources (internal/registry/pluginresources.go names them by mcpgw+plugin URIs) are read,
// subscribed to and unsubscribed from here, in the gateway: nothing is forwarded. A
// subscription is checked against the session's view when it is made and again for each
// event, so a session whose view lost the resource (a connection scope narrowed, the
// plugin disabled, its tools denied) stops hearing of it.

// Reconnection backoff of a watch whose provider channel closed (the plugin reloaded or
// restarted, or the subscriber fell behind).
const (
	watchBackoffMin = 200 * time.Millisecond
	watchBackoffMax = 10 * time.Second
)

// pluginWatch holds the plugin resource subscriptions of every session: one provider
// subscription per (plugin, connection, type) with at least one subscriber.
type pluginWatch struct {
	mu     sync.Mutex
	topics map[watchTopicKey]*watchTopic
	// bySession: each session's subscriptions, URI → ref.
	bySession map[*session.Session]map[string]registry.PluginRef
}

type watchTopicKey struct{ plugin, conn, key string }

type watchTopic struct {
	cancel  context.CancelFunc
	started chan struct{}                                      // closed once the provider subscription started or failed
	err     error                                              // why it failed; read after started is closed
	subs    map[*session.Session]map[string]registry.PluginRef // the topic's subscriptions per session
}

// pluginResourceRequest answers resources/read, subscribe and unsubscribe for a plugin URI.
func (pl *pluginCalls) pluginResourceRequest(ctx context.Context, s *session.Session, m *wire.Msg, uri string, out Outbox) {
	notFound := func(why string) {
		_ = out.Reply(wire.Error(m.ID, -32002, "Resource not found: "+uri+": "+why, map[string]string{"uri": uri}))
	}
	ref, err := registry.ParsePluginURI(uri)
	if err != nil {
		if m.Method == "resources/unsubscribe" {
			_ = out.Reply(wire.Result(m.ID, json.RawMessage(`{}`)))
			return
		}
		_ = out.Reply(wire.Error(m.ID, wire.CodeInvalidParams, "Invalid params: "+err.Error(), nil))
		return
	}
	if m.Method == "resources/unsubscribe" {
		s.Subs.Unsubscribe(uri)
		pl.subs.unsubscribe(s, uri)
		_ = out.Reply(wire.Result(m.ID, json.RawMessage(`{}`)))
		return
	}
	t := s.View().PluginReader(ref)
	if t == nil {
		notFound("this session has no such resource type on that connection")
		return
	}
	switch m.Method {
	case "resources/read":
		// Bounded like a tool's result: the provider learns the bound, and ReadResource
		// refuses a larger resource before writing it.
		var b json.RawMessage
		err := fmt.Errorf("plugin %q is not up", ref.Plugin) // replaced or removed since the view was built
		if host := pl.reg.PluginFor(t); host != nil {
			b, err = host.ReadResource(plugin.WithMaxResultBytes(ctx, pl.cfg.Upstream.MaxMessageBytes), ref)
		}
		if err != nil {
			if errors.Is(err, plugin.ErrNotFound) {
				notFound(err.Error())
				return
			}
			if errors.Is(err, plugin.ErrTooLarge) {
				err = fmt.Errorf("the resource is larger than %d bytes, the limit %s sets; read one resource, not a whole type, or raise %s",
					pl.cfg.Upstream.MaxMessageBytes, maxMessageSetting, maxMessageSetting)
			}
			_ = out.Reply(wire.Error(m.ID, wire.CodeInternalError, fmt.Sprintf("plugin %q: %v", ref.Plugin, err), nil))
			return
		}
		res, _ := json.Marshal(map[string]any{"contents": []map[string]any{{"uri": uri, "mimeType": "application/json", "text": string(b)}}})
		_ = out.Reply(wire.Result(m.ID, res))
	case "resources/subscribe":
		// Counted with the session's other subscriptions (server "": served here).
		if err := s.Subs.Subscribe(uri, "", SubscriptionQuota(pl.host.Policy(), pl.subAgents, s)); err != nil {
			_ = out.Reply(wire.Error(m.ID, wire.CodeInvalidParams, "Invalid params: "+err.Error(), map[string]string{"uri": uri}))
			return
		}
		if err := pl.subs.subscribe(pl, s, uri, ref, pl.reg.PluginFor(t)); err != nil {
			s.Subs.Unsubscribe(uri)
			_ = out.Reply(wire.Error(m.ID, wire.CodeInvalidRequest, err.Error(), map[string]string{"uri": uri}))
			return
		}
		_ = out.Reply(wire.Result(m.ID, json.RawMessage(`{}`)))
	}
}

// subscribe records a session's subscription to uri. The first subscriber of a type
// starts its provider subscription, and every subscriber of it returns only once that
// subscription is in place (a change made after the reply is reported) or failed. The
// provider is asked outside the lock: it may be another process.
func (w *pluginWatch) subscribe(pl *pluginCalls, s *session.Session, uri string, ref registry.PluginRef, host *registry.Plugin) error {
	w.mu.Lock()
	if w.bySession == nil {
		w.bySession, w.topics = map[*session.Session]map[string]registry.PluginRef{}, map[watchTopicKey]*watchTopic{}
	}
	closed := s.IsClosed()
	if closed {
		w.mu.Unlock()
		return errors.New("the session ended")
	}
	mine := w.bySession[s]
	if _, ok := mine[uri]; ok {
		w.mu.Unlock()
		return nil
	}
	if mine == nil {
		mine = map[string]registry.PluginRef{}
		w.bySession[s] = mine
	}
	k := watchTopicKey{ref.Plugin, ref.Conn, ref.Key}
	tp := w.topics[k]
	first := tp == nil
	var ctx context.Context
	if first {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(pl.ctx)
		tp = &watchTopic{cancel: cancel, started: make(chan struct{}), subs: map[*session.Session]map[string]registry.PluginRef{}}
		w.topics[k] = tp
	}
	mine[uri] = ref
	if tp.subs[s] == nil {
		tp.subs[s] = map[string]registry.PluginRef{}
	}
	tp.subs[s][uri] = ref
	w.mu.Unlock()

	if first {
		// Keep a provider subscription running while anyone listens. (Its context ends
		// when the last subscriber leaves, even while this call is still starting it.)
		var ch <-chan plugin.Event
		err := fmt.Errorf("plugin %q is not up", ref.Plugin) // nil host: replaced or removed
		if host != nil {
			ch, err = host.Watch(ctx, ref.Conn, ref.Key)
		}
		tp.err = err
		close(tp.started)
		if err != nil {
			tp.cancel()
			w.mu.Lock()
			// Everyone who joined meanwhile gets the same error; none stays subscribed.
			for ss, uris := range tp.subs {
				for u := range uris {
					delete(w.bySession[ss], u)
				}
				if len(w.bySession[ss]) == 0 {
					delete(w.bySession, ss)
				}
			}
			if w.topics[k] == tp {
				delete(w.topics, k)
			}
			w.mu.Unlock()
		} else {
			go w.run(ctx, pl, k, tp, ch)
		}
	} else {
		select {
		case <-tp.started:
		case <-pl.ctx.Done():
			return errors.New("the gateway is shutting down")
		}
	}
	if err := tp.err; err != nil {
		if errors.Is(err, registry.ErrNoWatch) {
			return fmt.Errorf("plugin %q does not report changes, so its resources cannot be subscribed to", ref.Plugin)
		}
		return fmt.Errorf("plugin %q: %v", ref.Plugin, err)
	}
	return nil
}

func (w *pluginWatch) unsubscribe(s *session.Session, uri string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	ref, ok := w.bySession[s][uri]
	if !ok {
		return
	}
	delete(w.bySession[s], uri)
	if len(w.bySession[s]) == 0 {
		delete(w.bySession, s)
	}
	w.dropLocked(s, watchTopicKey{ref.Plugin, ref.Conn, ref.Key}, uri)
}

// dropSession ends every plugin subscription of a session that ended.
func (w *pluginWatch) dropSession(s *session.Session) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for uri, ref := range w.bySession[s] {
		w.dropLocked(s, watchTopicKey{ref.Plugin, ref.Conn, ref.Key}, uri)
	}
	delete(w.bySession, s)
}

func (w *pluginWatch) dropLocked(s *session.Session, k watchTopicKey, uri string) {
	tp := w.topics[k]
	if tp == nil {
		return
	}
	delete(tp.subs[s], uri)
	if len(tp.subs[s]) == 0 {
		delete(tp.subs, s)
	}
	if len(tp.subs) == 0 {
		tp.cancel()
		delete(w.topics, k)
	}
}

// run delivers a topic's events until its last subscriber leaves. When the provider's
// channel closes while subscribers remain (the plugin was reloaded or restarted, or this
// watch fell behind), the watch subscribes again, with backoff while the plugin is down,
// and then tells every subscriber its resource changed: events may have been missed.
func (w *pluginWatch) run(ctx context.Context, pl *pluginCalls, k watchTopicKey, tp *watchTopic, ch <-chan plugin.Event) {
	backoff := watchBackoffMin
	for {
		for e := range ch {
			w.deliver(tp, e)
			backoff = watchBackoffMin
		}
		if ctx.Err() != nil {
			return
		}
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			if backoff *= 2; backoff > watchBackoffMax {
				backoff = watchBackoffMax
			}
			host := pl.reg.Plugin(k.plugin)
			if host == nil {
				continue // removed; its subscribers may see it again after a reload
			}
			var err error
			if ch, err = host.Watch(ctx, k.conn, k.key); err == nil {
				break
			}
		}
		// Told once the watch is back (and the plugin up, so that the sessions' views
		// have the resource again): what happened meanwhile is unknown, read it again.
		w.deliver(tp, plugin.Event{Type: plugin.EventUpdate, Connection: k.conn, Key: k.key})
	}
}

// deliver sends notifications/resources/updated for e to each subscribed session whose
// subscription matches and whose view still allows the resource.
func (w *pluginWatch) deliver(tp *watchTopic, e plugin.Event) {
	type target struct {
		s   *session.Session
		uri string
		ref registry.PluginRef
	}
	var ts []target
	w.mu.Lock()
	for s, subs := range tp.subs {
		for uri, ref := range subs {
			if ref.Matches(e) {
				ts = append(ts, target{s, uri, ref})
			}
		}
	}
	w.mu.Unlock()
	for _, t := range ts {
		if t.s.View().PluginReader(t.ref) == nil {
			continue
		}
		params, _ := json.Marshal(updatedParams{URI: t.uri, Meta: map[string]watchEvent{eventMetaKey: {
			Plugin: t.ref.Plugin, ConnectionID: e.Connection, ResourceKey: e.Key, EventType: string(e.Type),
			Type: string(e.Type), ResourceType: e.Key, Connection: e.Connection, ID: e.ID, Namespace: e.Namespace}}})
		_ = t.s.Send(wire.Notification("notifications/resources/updated", params))
	}
}

// eventMetaKey is the _meta member of a plugin resource's notifications/resources/updated
// that says what changed, so that a subscriber to a whole type need not re-read it to
// learn which row: {"plugin", "connectionId", "resourceKey", "eventType": "ADD" |
// "UPDATE" | "DELETE", "id", "namespace"}, and the same under the names it had first
// ("connection", "resourceType", "type"), which clients may read; no id means the whole
// type changed (or the watch was re-made and what happened meanwhile is unknown).
const eventMetaKey = "mcpgw/event"

type updatedParams struct {
	URI  string                `json:"uri"`
	Meta map[string]watchEvent `json:"_meta"`
}

type watchEvent struct {
	// The design's names: the plugin's id, the connectionId its tools take, the resource
	// key (group::version::kind) and what happened.
	Plugin       string `json:"plugin"`
	ConnectionID string `json:"connectionId"`
	ResourceKey  string `json:"resourceKey"`
	EventType    string `json:"eventType"`
	// The first names, kept for the clients that read them.
	Type         string `json:"type"`
	ResourceType string `json:"resourceType"`
	Connection   string `json:"connection"`
	ID           string `json:"id,omitempty"`
	Namespace    string `json:"namespace,omitempty"`
}

// SubscribePlugin subscribes session s to a plugin resource (a stateless caller's listen).
func (pl *pluginCalls) SubscribePlugin(s *session.Session, uri string, ref registry.PluginRef, host *registry.Plugin) error {
	return pl.subs.subscribe(pl, s, uri, ref, host)
}

// UnsubscribePlugin ends session s's subscription to a plugin resource.
func (pl *pluginCalls) UnsubscribePlugin(s *session.Session, uri string) {
	pl.subs.unsubscribe(s, uri)
}
