package dispatch

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/reqparams"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/subscriptions"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// The forwarded requests other than tools/call: prompts/get, resources/read and
// (un)subscribe, completion/complete, and logging/setLevel.

func (dp *Dispatcher) getPrompt(ctx context.Context, s *session.Session, m *wire.Msg, out Outbox) {
	p, err := reqparams.Read(m.Params)
	if err != nil || p.Name == "" {
		msg := "Invalid params: prompts/get needs a prompt name"
		if err != nil {
			msg = "Invalid params: " + err.Error()
		}
		_ = out.Reply(wire.Error(m.ID, wire.CodeInvalidParams, msg, nil))
		return
	}
	pr := s.View().Prompt(p.Name)
	if pr == nil {
		_ = out.Reply(wire.Error(m.ID, wire.CodeInvalidParams, "Unknown prompt: "+p.Name, nil))
		return
	}
	meta, tok, err := dp.rewriteMeta(p.Meta)
	if err != nil {
		_ = out.Reply(wire.Error(m.ID, wire.CodeInvalidParams, "Invalid params: _meta "+err.Error(), nil))
		return
	}
	var b wire.Object
	b.Str("name", pr.Name)
	b.Raw("arguments", p.Arguments)
	b.Raw("_meta", meta)
	b.Raw("inputResponses", p.InputResponses)
	b.Raw("requestState", p.RequestState)
	dp.forward(ctx, &upstreamCall{s: s, m: m, server: pr.Server, method: "prompts/get", params: b.Bytes(), prog: tok, out: out})
}

// SubscriptionQuota is what session s's next resource subscription is checked against
// under cfg: the http.max_subscriptions_* and http.max_uri_bytes settings, counted for its
// agent in agents.
func SubscriptionQuota(cfg *config.Config, agents *subscriptions.Agents, s *session.Session) subscriptions.Quota {
	return subscriptions.Quota{Limits: subscriptions.Limits{PerSession: cfg.HTTP.MaxSubscriptionsPerSession,
		PerAgent: cfg.HTTP.MaxSubscriptionsPerAgent, URIBytes: cfg.HTTP.MaxURIBytes}, Agent: s.Rec.Agent, Agents: agents}
}

// ResourceServer finds which upstream serves a URI: a listed resource, else the first
// server with a template that matches it.
func ResourceServer(v *registry.View, uri string) string {
	server, _ := ResourceTarget(v, uri, config.Naming{Prefix: "never"})
	return server
}

// ResourceTarget finds which upstream serves a URI a client named, and the URI that
// upstream knows it by: a listed resource (ui:// resources are listed under the gateway's
// name for them, registry.ExposedURI), else the first server with a template that matches
// it, else a ui:// URI the gateway named for one of the view's servers (a resource that
// server serves without listing it). "" when none does.
func ResourceTarget(v *registry.View, uri string, n config.Naming) (server, own string) {
	if r := v.Resource(uri); r != nil {
		return r.Server, r.URI
	}
	for _, t := range v.Templates {
		if templateMatches(t.URI, uri) {
			return t.Server, uri
		}
	}
	if s, o, ok := registry.UpstreamURI(v.Servers, uri, n); ok {
		return s, o
	}
	return "", ""
}

// templateMatches matches a URI against an RFC 6570 template's literal parts; each
// expression matches any run of characters (with backtracking).
func templateMatches(tmpl, uri string) bool {
	i := strings.IndexByte(tmpl, '{')
	if i < 0 {
		return tmpl == uri
	}
	if !strings.HasPrefix(uri, tmpl[:i]) {
		return false
	}
	j := strings.IndexByte(tmpl[i:], '}')
	if j < 0 {
		return false
	}
	rest, uri := tmpl[i+j+1:], uri[i:]
	for k := len(uri); k >= 0; k-- {
		if templateMatches(rest, uri[k:]) {
			return true
		}
	}
	return false
}

func (dp *Dispatcher) resourceRequest(ctx context.Context, s *session.Session, m *wire.Msg, out Outbox) {
	p, err := reqparams.Read(m.Params)
	if err != nil || p.URI == "" {
		msg := "Invalid params: " + m.Method + " needs a uri"
		if err != nil {
			msg = "Invalid params: " + err.Error()
		}
		_ = out.Reply(wire.Error(m.ID, wire.CodeInvalidParams, msg, nil))
		return
	}
	if m.Method == "resources/subscribe" {
		// Before any lookup: a URI the session may not hold is not worth matching.
		if err := SubscriptionQuota(dp.Host.Policy(), dp.SubAgents, s).CheckURI(p.URI); err != nil {
			_ = out.Reply(wire.Error(m.ID, wire.CodeInvalidParams, "Invalid params: "+err.Error(), nil))
			return
		}
	}
	if registry.IsPluginURI(p.URI) {
		dp.pluginResourceRequest(ctx, s, m, p.URI, out) // served in the gateway (pluginresources.go)
		return
	}
	if m.Method == "resources/read" && dp.skillRequest(ctx, s, m, p, out) {
		return // a skill's file (skills.go)
	}
	meta, tok, err := dp.rewriteMeta(p.Meta)
	if err != nil {
		_ = out.Reply(wire.Error(m.ID, wire.CodeInvalidParams, "Invalid params: _meta "+err.Error(), nil))
		return
	}
	naming := dp.Host.Policy().Naming
	server, own := ResourceTarget(s.View(), p.URI, naming)
	if m.Method == "resources/unsubscribe" {
		if sv, ok := s.Subs.Unsubscribe(p.URI); ok && sv != server {
			// Subscribed to a resource the view no longer lists: the server it went to.
			server, own = sv, p.URI
			if _, o, ok := registry.UpstreamURI([]string{sv}, p.URI, naming); ok {
				own = o
			}
		}
	}
	if server == "" {
		_ = out.Reply(wire.Error(m.ID, -32002, "Resource not found: "+p.URI, map[string]string{"uri": p.URI}))
		return
	}
	if m.Method == "resources/subscribe" {
		if err := s.Subs.Subscribe(p.URI, server, SubscriptionQuota(dp.Host.Policy(), dp.SubAgents, s)); err != nil {
			_ = out.Reply(wire.Error(m.ID, wire.CodeInvalidParams, "Invalid params: "+err.Error(), nil))
			return
		}
	}
	if m.Method != "resources/read" && dp.watchStateless(ctx, s, m, server, own, out) {
		return
	}
	// The upstream gets the URI that was routed on, as it knows it, not the client's params.
	var b wire.Object
	b.Str("uri", own)
	b.Raw("_meta", meta)
	b.Raw("inputResponses", p.InputResponses)
	b.Raw("requestState", p.RequestState)
	c := &upstreamCall{s: s, m: m, server: server, method: m.Method, params: b.Bytes(), prog: tok, out: out}
	if own != p.URI && m.Method == "resources/read" {
		c.rewrite = func(res []byte) ([]byte, error) { return renameContents(res, own, p.URI), nil }
	}
	dp.forward(ctx, c)
}

func (dp *Dispatcher) complete(ctx context.Context, s *session.Session, m *wire.Msg, out Outbox) {
	p, err := reqparams.Read(m.Params)
	var ref reqparams.Ref
	if err == nil {
		ref, err = reqparams.ReadRef(p.Ref)
	}
	if err != nil {
		_ = out.Reply(wire.Error(m.ID, wire.CodeInvalidParams, "Invalid params: completion/complete needs a ref ("+err.Error()+")", nil))
		return
	}
	meta, tok, err := dp.rewriteMeta(p.Meta)
	if err != nil {
		_ = out.Reply(wire.Error(m.ID, wire.CodeInvalidParams, "Invalid params: _meta "+err.Error(), nil))
		return
	}
	v := s.View()
	var server string
	var nr wire.Object
	switch ref.Type {
	case "ref/prompt":
		pr := v.Prompt(ref.Name)
		if pr == nil {
			_ = out.Reply(wire.Error(m.ID, wire.CodeInvalidParams, "Unknown prompt: "+ref.Name, nil))
			return
		}
		server = pr.Server
		nr.Str("type", "ref/prompt")
		nr.Str("name", pr.Name)
	case "ref/resource":
		if registry.IsPluginURI(ref.URI) {
			// Plugin resources are served by the gateway, which completes nothing for them.
			_ = out.Reply(wire.Result(m.ID, json.RawMessage(`{"completion":{"values":[],"hasMore":false}}`)))
			return
		}
		server = ResourceServer(v, ref.URI)
		for _, t := range v.Templates {
			if t.URI == ref.URI {
				server = t.Server
			}
		}
		if server == "" {
			_ = out.Reply(wire.Error(m.ID, wire.CodeInvalidParams, "Unknown resource: "+ref.URI, nil))
			return
		}
		nr.Str("type", "ref/resource")
		nr.Str("uri", ref.URI)
	default:
		_ = out.Reply(wire.Error(m.ID, wire.CodeInvalidParams, "Invalid params: unknown ref type "+ref.Type, nil))
		return
	}
	var b wire.Object
	b.Raw("ref", nr.Bytes())
	b.Raw("argument", p.Argument)
	b.Raw("context", p.Context)
	b.Raw("_meta", meta)
	dp.forward(ctx, &upstreamCall{s: s, m: m, server: server, method: "completion/complete", params: b.Bytes(), prog: tok, out: out})
}

// setLevel records the session's log level and passes it to the upstreams that log.
func (dp *Dispatcher) setLevel(ctx context.Context, s *session.Session, m *wire.Msg, out Outbox) {
	p, err := reqparams.Read(m.Params)
	if err != nil || !reqparams.ValidLevel(p.Level) {
		_ = out.Reply(wire.Error(m.ID, wire.CodeInvalidParams, "Invalid params: unknown log level", nil))
		return
	}
	rec := s.SetLogLevel(p.Level)
	conns := dp.Reg.Instances().OwnConns(s.Upstreams)
	_ = dp.Store.Put(&rec)
	for _, name := range s.Servers() {
		if srv := dp.Reg.Server(name); srv != nil && srv.Mode == config.ModeShared {
			if c := srv.Shared(); c != nil {
				conns = append(conns, c)
			}
		}
	}
	params, _ := json.Marshal(map[string]string{"level": p.Level})
	for _, c := range conns {
		if c.ServerCaps.Logging == nil {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		if _, err := c.Request(cctx, "logging/setLevel", params); err != nil {
			dp.Log.Debug("logging/setLevel upstream failed", "server", c.Name, "err", err)
		}
		cancel()
	}
	_ = out.Reply(wire.Result(m.ID, json.RawMessage(`{}`)))
}
