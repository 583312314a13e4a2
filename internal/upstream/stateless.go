package upstream

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpgw/mcpgw/internal/httpclient"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// The stateless revision (2026-07-28) toward upstreams. An upstream that only speaks it
// refuses initialize (method not found, -32020 for the MCP-Protocol-Version header the
// session-era initialize goes without, or -32022 naming 2026-07-28); a server configured
// with protocol_version 2026-07-28 is asked that way from the start. The connection then
// asks server/discover for the capabilities, and every request carries the revision's
// _meta (protocol version, client capabilities, client info) and, over HTTP, the
// MCP-Protocol-Version, Mcp-Method and Mcp-Name headers. There is no session and no GET
// stream. Results an upstream returns as input_required are the gateway's to complete
// (internal/gateway/internal/dispatch/statelessup.go).

// StatelessVersion is the stateless protocol revision.
const StatelessVersion = "2026-07-28"

// SessionVersion is the session revision offered in initialize by default.
const SessionVersion = "2025-11-25"

// AutoVersion asks for the stateless revision when the server serves it (server/discover
// lists it) and for SessionVersion otherwise (Options.ProtocolVersion).
const AutoVersion = "auto"

// refusesInitialize reports whether an initialize error says the server speaks only the
// stateless revision.
func refusesInitialize(err error) bool {
	var re *RPCError
	if !errors.As(err, &re) {
		return false
	}
	switch re.Code {
	case -32601:
		return true
	case -32020:
		// The revision's header error (missing, or not matching _meta): only a server of
		// the stateless revision asks for the header on initialize, which a session-era
		// client sends before any version is agreed. The conformance suite's 2026-07-28
		// servers answer so.
		return true
	case -32022:
		return strings.Contains(string(re.Raw), StatelessVersion)
	}
	return false
}

// discover sets the connection up for the stateless revision.
func (c *Conn) discover(ctx context.Context, caps, info json.RawMessage) error {
	meta, _ := json.Marshal(map[string]json.RawMessage{
		"io.modelcontextprotocol/protocolVersion":    wire.Quote(StatelessVersion),
		"io.modelcontextprotocol/clientCapabilities": caps,
		"io.modelcontextprotocol/clientInfo":         info,
	})
	c.statelessMeta = meta
	c.Stateless = true
	c.tr.afterInit(StatelessVersion)
	res, err := c.Request(ctx, "server/discover", nil)
	var re *RPCError
	if errors.As(err, &re) && re.Code == -32022 && strings.Contains(string(re.Raw), StatelessVersion) {
		// "Unsupported protocol version" naming the very version asked for among those it
		// supports: a client retries with a supported version, which is this one, once.
		res, err = c.Request(ctx, "server/discover", nil)
	}
	if err != nil {
		return fmt.Errorf("server/discover: %w", err)
	}
	var dr struct {
		SupportedVersions []string        `json:"supportedVersions"`
		Capabilities      json.RawMessage `json:"capabilities"`
		Instructions      string          `json:"instructions"`
	}
	if err := json.Unmarshal(res, &dr); err != nil {
		return fmt.Errorf("bad server/discover result: %w", err)
	}
	if !slices.Contains(dr.SupportedVersions, StatelessVersion) {
		return fmt.Errorf("server/discover: the server supports %v, not %s", dr.SupportedVersions, StatelessVersion)
	}
	c.InitResult = res
	c.ProtocolVersion = StatelessVersion
	c.Instructions = dr.Instructions
	if len(dr.Capabilities) > 0 {
		_ = json.Unmarshal(dr.Capabilities, &c.ServerCaps)
	}
	go c.listenStateless()
	return nil
}

// notStateless undoes what a failed discover set, before the connection initializes on a
// session revision.
func (c *Conn) notStateless() {
	c.Stateless = false
	c.statelessMeta = nil
	if st, ok := c.tr.(*streamTransport); ok {
		st.mu.Lock()
		st.version, st.sessionID = "", ""
		st.mu.Unlock()
	}
}

const methodListen = "subscriptions/listen"

// listenStateless opens the connection's subscriptions/listen stream for the list changes
// the upstream declares: they arrive as the list_changed notifications a session-era
// upstream sends (the registry re-reads the lists). The request lasts as long as the
// connection; it is not counted as in flight.
func (c *Conn) listenStateless() {
	caps := c.ServerCaps
	want := map[string]bool{}
	if caps.Tools != nil && caps.Tools.ListChanged {
		want["toolsListChanged"] = true
	}
	if caps.Prompts != nil && caps.Prompts.ListChanged {
		want["promptsListChanged"] = true
	}
	if caps.Resources != nil && caps.Resources.ListChanged {
		want["resourcesListChanged"] = true
	}
	if len(want) == 0 {
		return
	}
	params, _ := json.Marshal(map[string]any{"notifications": want})
	k, err := c.Begin(context.Background(), methodListen, params, nil)
	if err != nil {
		c.log.Debug("subscriptions/listen upstream failed", "server", c.Name, "err", err)
		return
	}
	for {
		_, final, err := k.Next(context.Background())
		if err != nil || final {
			if err != nil && !errors.Is(err, ErrClosed) {
				c.log.Debug("subscriptions/listen upstream ended", "server", c.Name, "err", err)
			}
			return
		}
	}
}

// withMeta adds meta's members to params._meta (members params already has win).
func withMeta(params, meta json.RawMessage) json.RawMessage {
	var out []byte
	var old json.RawMessage
	first := true
	add := func(k string, v []byte) {
		if first {
			out = append(out, '{')
			first = false
		} else {
			out = append(out, ',')
		}
		out = wire.AppendQuote(out, k)
		out = append(out, ':')
		out = append(out, v...)
	}
	if len(params) > 0 && string(params) != "null" {
		_ = wire.Members(params, func(k string, v []byte) error {
			if k == "_meta" {
				old = v
				return nil
			}
			add(k, v)
			return nil
		})
	}
	var m []byte
	mfirst := true
	madd := func(k string, v []byte) {
		if mfirst {
			m = append(m, '{')
			mfirst = false
		} else {
			m = append(m, ',')
		}
		m = wire.AppendQuote(m, k)
		m = append(m, ':')
		m = append(m, v...)
	}
	have := map[string]bool{}
	if len(old) > 0 && string(old) != "null" {
		_ = wire.Members(old, func(k string, v []byte) error {
			have[k] = true
			madd(k, v)
			return nil
		})
	}
	_ = wire.Members(meta, func(k string, v []byte) error {
		if !have[k] {
			madd(k, v)
		}
		return nil
	})
	if mfirst {
		m = []byte("{}")
	} else {
		m = append(m, '}')
	}
	add("_meta", m)
	return append(out, '}')
}

// addStatelessHeaders adds the Mcp-Method and Mcp-Name headers of a request body, and for
// a tools/call the Mcp-Param-* headers of the arguments the tool's schema marks (k's
// connection knows which; k is nil for a message that is no call of the gateway's).
func addStatelessHeaders(h *httpclient.Header, body []byte, k *Call) {
	var m wire.Msg
	if wire.ParseInto(body, &m) != nil || m.Method == "" {
		return
	}
	h.Add("Mcp-Method", headerSafe(m.Method))
	member := ""
	switch m.Method {
	case "tools/call", "prompts/get":
		member = "name"
	case "resources/read":
		member = "uri"
	case "tasks/get", "tasks/update", "tasks/cancel": // the Tasks extension
		member = "taskId"
	default:
		return
	}
	var name string
	var args []byte
	_ = wire.Members(m.Params, func(key string, v []byte) error {
		switch key {
		case member:
			if s, ok := wire.String(v); ok {
				name = s
				h.Add("Mcp-Name", headerSafe(s))
			}
		case "arguments":
			args = v
		}
		return nil
	})
	if m.Method == "tools/call" && name != "" && k != nil && k.conn != nil {
		k.conn.addParamHeaders(h, name, args)
	}
}

// headerSafe is a header value as the revision encodes it: plain visible ASCII as is,
// anything else (or a value that looks encoded) as =?base64?…?=.
func headerSafe(v string) string {
	plain := v != "" && v == strings.TrimSpace(v) && !(strings.HasPrefix(v, "=?base64?") && strings.HasSuffix(v, "?="))
	for i := 0; plain && i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			plain = false
		}
	}
	if plain {
		return v
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(v)) + "?="
}

// WatchResource subscribes to a resource's updates on an upstream of the stateless
// revision, which has no resources/subscribe: a subscriptions/listen request for that URI
// alone, open until stop. notifications/resources/updated arrive at the handler as from a
// session-era upstream.
func (c *Conn) WatchResource(uri string) (stop func(), err error) {
	params, _ := json.Marshal(map[string]any{"notifications": map[string]any{"resourceSubscriptions": []string{uri}}})
	k, err := c.Begin(context.Background(), methodListen, params, nil)
	if err != nil {
		return nil, err
	}
	go func() {
		for {
			if _, final, err := k.Next(context.Background()); err != nil || final {
				return
			}
		}
	}()
	return func() { c.Abandon(k, "unsubscribed") }, nil
}
