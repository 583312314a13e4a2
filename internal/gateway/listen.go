package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/dispatch"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/listenstream"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/reply"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/reqparams"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/stateless"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/subscriptions"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// subscriptions/listen (stateless revision): a POST whose response stream stays open and
// carries the change notifications the client opted in to: list_changed of tools, prompts
// and resources, and notifications/resources/updated for the URIs it names. The stream
// starts with notifications/subscriptions/acknowledged, and every notification on it
// carries the listen request's id in _meta io.modelcontextprotocol/subscriptionId.
//
// The notifications come from the caller's gateway-side session: what the session path
// sends on a GET stream (Session.send) goes to the session's listeners instead.

// listenKeepAlive is the interval of the comment lines that keep an idle listen stream
// open through proxies; each also counts as activity of the session, so a listening
// caller's session is not reaped as idle.
const listenKeepAlive = 25 * time.Second

// listSaid tells the listeners of every session that uses server a list_changed its
// shared connection sent though the re-read lists the same (an upstream that adds a tool
// it had added before, say): as for a session's own instance (flushSaid), an upstream
// that says its list changed is believed by those who listen. Sessions without listeners
// are not told: their client compares what it lists, and nothing changed.
func (f *statelessFront) listSaid(server, method string) {
	msg := wire.Notification(method, nil)
	for _, s := range f.g.live.all() {
		ls := s.Listen.Load()
		if ls == nil || !slices.Contains(s.Servers(), server) {
			continue
		}
		_ = ls.Send(msg)
	}
}

// listen serves subscriptions/listen for session s until the client goes away or the
// session ends.
func (f *statelessFront) listen(w http.ResponseWriter, r *http.Request, s *session.Session, req *stateless.Request) {
	g := f.g
	var p struct {
		Notifications *listenstream.Filter `json:"notifications"`
	}
	if err := json.Unmarshal(reqparams.NonNull(req.M.Params), &p); err != nil || p.Notifications == nil {
		reply.JSON(w, http.StatusOK, wire.Error(req.M.ID, wire.CodeInvalidParams, "Invalid params: subscriptions/listen needs notifications", nil))
		return
	}
	want := *p.Notifications
	// What the gateway honours: it declares listChanged for all three lists, and resource
	// subscriptions for URIs one of the caller's upstreams serves.
	agreed := listenstream.Filter{ToolsListChanged: want.ToolsListChanged, PromptsListChanged: want.PromptsListChanged,
		ResourcesListChanged: want.ResourcesListChanged}
	q := dispatch.SubscriptionQuota(g.policy().cfg, &g.subAgents, s)
	if err := checkListenURIs(want.ResourceSubscriptions, q.Limits); err != nil {
		reply.JSON(w, http.StatusOK, wire.Error(req.M.ID, wire.CodeInvalidParams, "Invalid params: "+err.Error(), nil))
		return
	}
	for _, uri := range want.ResourceSubscriptions {
		ok, err := f.subscribeFor(r.Context(), s, uri, q)
		if err != nil {
			for _, uri := range agreed.ResourceSubscriptions {
				f.unsubscribeFor(s, uri)
			}
			reply.JSON(w, http.StatusOK, wire.Error(req.M.ID, wire.CodeInvalidParams, "Invalid params: "+err.Error(), nil))
			return
		}
		if ok {
			agreed.ResourceSubscriptions = append(agreed.ResourceSubscriptions, uri)
		}
	}
	subscribed := agreed.ResourceSubscriptions
	l := listenstream.New(req.M.ID, agreed)
	s.Used.Store(true) // a listening caller's session is in use, not an unused one
	// The session starts comparing its lists from now: a change after this point is told.
	v := s.View()
	s.Shown.Baseline(session.Fingerprints(v))
	set := s.Listeners()
	set.Add(l)
	defer func() {
		set.Remove(l)
		for _, uri := range subscribed {
			f.unsubscribeFor(s, uri)
		}
	}()
	out := stateless.NewOut(w, false)
	ack, _ := json.Marshal(map[string]any{"notifications": agreed, "_meta": map[string]json.RawMessage{listenstream.MetaSubscriptionID: req.M.ID}})
	if out.Notify(wire.Notification("notifications/subscriptions/acknowledged", ack)) != nil {
		return
	}
	if agreed.Empty() {
		// Nothing to listen for: the subscription ends at once.
		res, _ := json.Marshal(map[string]any{"_meta": map[string]json.RawMessage{listenstream.MetaSubscriptionID: req.M.ID}})
		out.Final(wire.Result(req.M.ID, f.statelessResult("subscriptions/listen", res)), http.StatusOK)
		return
	}
	keep := time.NewTicker(listenKeepAlive)
	defer keep.Stop()
	fl, _ := w.(http.Flusher)
	for {
		select {
		case msg := <-l.C:
			if out.Notify(msg) != nil {
				return
			}
		case <-keep.C:
			s.Touch()
			if _, err := w.Write([]byte(": keep-alive\n\n")); err != nil {
				return
			}
			if fl != nil {
				fl.Flush()
			}
		case <-l.Done():
			return
		case <-r.Context().Done():
			return
		case <-g.ctx.Done():
			return
		}
		if s.IsClosed() {
			return
		}
	}
}

// checkListenURIs refuses a listen that names more distinct URIs than one session may hold,
// or a URI longer than l allows, before any is subscribed.
func checkListenURIs(uris []string, l subscriptions.Limits) error {
	distinct := map[string]bool{}
	for _, uri := range uris {
		if err := l.CheckURI(uri); err != nil {
			return err
		}
		distinct[uri] = true
	}
	if l.PerSession > 0 && len(distinct) > l.PerSession {
		return &subscriptions.LimitError{Setting: subscriptions.SettingPerSession, Limit: l.PerSession}
	}
	return nil
}

// subscribeFor subscribes the session to uri at the upstream that serves it (once per
// URI, however many listeners name it), within q. It reports whether updates can come,
// and an error when q refuses the URI.
func (f *statelessFront) subscribeFor(ctx context.Context, s *session.Session, uri string, q subscriptions.Quota) (bool, error) {
	g := f.g
	if registry.IsPluginURI(uri) {
		return f.subscribePluginFor(s, uri, q)
	}
	server, own := dispatch.ResourceTarget(s.View(), uri, g.reg.Config().Naming)
	if server == "" {
		return false, nil
	}
	if first, err := s.Subs.Listen(uri, server, q); err != nil || !first {
		return err == nil, err
	}
	c, err := s.Upstreams.Conn(ctx, server)
	if err != nil || c.ServerCaps.Resources == nil || !c.ServerCaps.Resources.Subscribe {
		f.unsubscribeFor(s, uri)
		return false, nil
	}
	params, _ := json.Marshal(map[string]string{"uri": own}) // the URI the upstream knows
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := c.Request(cctx, "resources/subscribe", params); err != nil {
		g.log.Debug("resources/subscribe upstream failed", "server", server, "uri", uri, "err", err)
		f.unsubscribeFor(s, uri)
		return false, nil
	}
	return true, nil
}

// unsubscribeFor drops one listener's interest in uri; the last one unsubscribes upstream.
func (f *statelessFront) unsubscribeFor(s *session.Session, uri string) {
	g := f.g
	last, server := s.Subs.Unlisten(uri)
	if last && registry.IsPluginURI(uri) {
		g.calls.UnsubscribePlugin(s, uri)
		return
	}
	if !last || server == "" {
		return
	}
	srv := g.reg.Server(server)
	if srv == nil {
		return
	}
	if _, own, ok := registry.UpstreamURI([]string{server}, uri, g.reg.Config().Naming); ok {
		uri = own // a ui:// resource the gateway renamed: the URI the upstream knows
	}
	go func() {
		ctx, cancel := context.WithTimeout(g.ctx, 10*time.Second)
		defer cancel()
		var c interface {
			Request(context.Context, string, json.RawMessage) (json.RawMessage, error)
		}
		if srv.Mode == config.ModeShared {
			if sc := srv.Shared(); sc != nil {
				c = sc
			}
		} else if !s.IsClosed() {
			if sc, err := s.Upstreams.Conn(ctx, server); err == nil {
				c = sc
			}
		}
		if c == nil {
			return
		}
		params, _ := json.Marshal(map[string]string{"uri": uri})
		_, _ = c.Request(ctx, "resources/unsubscribe", params)
	}()
}

// subscribePluginFor is subscribeFor for a plugin resource: the same view check and
// provider subscription as resources/subscribe from a session client (dispatch/pluginresources.go),
// counted per URI like an upstream's so that the last listener naming it unsubscribes.
func (f *statelessFront) subscribePluginFor(s *session.Session, uri string, q subscriptions.Quota) (bool, error) {
	g := f.g
	ref, err := registry.ParsePluginURI(uri)
	if err != nil {
		return false, nil
	}
	t := s.View().PluginReader(ref)
	if t == nil {
		return false, nil
	}
	if first, err := s.Subs.Listen(uri, "", q); err != nil || !first {
		return err == nil, err
	}
	if err := g.calls.SubscribePlugin(s, uri, ref, g.reg.PluginFor(t)); err != nil {
		g.log.Debug("plugin resource subscription refused", "uri", uri, "err", err)
		s.Subs.Unlisten(uri)
		return false, nil
	}
	return true, nil
}
