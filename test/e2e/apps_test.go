package e2e

// MCP Apps (extension io.modelcontextprotocol/ui) through the gateway, with the real
// example servers of @modelcontextprotocol/ext-apps: basic-vanillajs and basic-react both
// have a tool get-time linking ui://get-time/mcp-app.html. A raw client follows the links
// as a host does (list the tools, read _meta.ui.resourceUri, resources/read it) in every
// list form, and each link must give its own server's HTML (docs/protocol.md, "MCP Apps").

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const (
	appsUI       = "io.modelcontextprotocol/ui"
	appsMimeType = "text/html;profile=mcp-app"
	// Long server names, so that a client profile of name_max 24 shapes their tools' names.
	appsVanilla = "basic-vanillajs-example-server"
	appsReact   = "basic-react-example-server"
)

// appsServer is the config entry of an ext-apps example server over stdio.
func appsServer(t *testing.T, name, pkg string) string {
	return "  " + name + ": {type: stdio, command: {{node}}, args: [" + yamlQuote(npmServerScript(t, pkg)) + `, "--stdio"]}` + "\n"
}

// appsHTML is the HTML an example server serves for its app (its dist/mcp-app.html).
func appsHTML(t *testing.T, pkg string) string {
	b, err := os.ReadFile(filepath.Join(filepath.Dir(npmServerScript(t, pkg)), "mcp-app.html"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// openAppsSession initializes a session of a host that declares the UI extension, asking
// for list form form (full, thin, search) as client clientName, and checks that the
// gateway declared the extension back.
func openAppsSession(t *testing.T, url, form, clientName string) *rawSession {
	t.Helper()
	hdr := map[string]string{"X-MCP-Handshake": form}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{"extensions":{%q:{"mimeTypes":[%q]}}},"clientInfo":{"name":%q,"version":"1.0.0"}}}`,
		rawProtocolVersion, appsUI, appsMimeType, clientName)
	a := rawRequest(t, http.MethodPost, url, hdr, body)
	sid := a.Header.Get("Mcp-Session-Id")
	if a.Status != http.StatusOK || a.Reply == nil || a.Reply.Error != nil || sid == "" {
		t.Fatalf("initialize: %s", a)
	}
	var res struct {
		Capabilities struct {
			Extensions map[string]json.RawMessage `json:"extensions"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal(a.Reply.Result, &res); err != nil {
		t.Fatal(err)
	}
	if _, ok := res.Capabilities.Extensions[appsUI]; !ok {
		t.Errorf("the gateway did not declare %s to a host that did, with two Apps servers in its view: %s", appsUI, a.Reply.Result)
	}
	s := &rawSession{URL: url, Header: hdr, ID: sid}
	s.next.Store(1)
	if n := s.post(t, nil, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); n.Status != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %s", n)
	}
	return s
}

// appsToolDefs is what the host learns of the tools: the listed definitions (full, thin,
// shaped), or those search_tools finds (search form).
func appsToolDefs(t *testing.T, s *rawSession, form string) []json.RawMessage {
	t.Helper()
	if form == "search" {
		a := s.callTool(t, lfSearch, map[string]any{"query": "get-time current server time"})
		if a.Reply == nil || a.Reply.Error != nil {
			t.Fatalf("search_tools: %s", a)
		}
		_, defs := searchFound(t, a.Reply.Result)
		var out []json.RawMessage
		for _, d := range defs {
			out = append(out, d)
		}
		return out
	}
	a := s.request(t, nil, "tools/list", map[string]any{})
	if a.Reply == nil || a.Reply.Error != nil {
		t.Fatalf("tools/list: %s", a)
	}
	var res struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(a.Reply.Result, &res); err != nil {
		t.Fatal(err)
	}
	return res.Tools
}

// appsLinks are the get-time tools among defs: listed name → its UI link, failing the test
// when the new and the legacy link differ.
func appsLinks(t *testing.T, defs []json.RawMessage) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, raw := range defs {
		var d struct {
			Name string `json:"name"`
			Meta struct {
				UI struct {
					ResourceURI string `json:"resourceUri"`
				} `json:"ui"`
				Legacy string `json:"ui/resourceUri"`
			} `json:"_meta"`
		}
		if err := json.Unmarshal(raw, &d); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(d.Name, "get-time") {
			continue
		}
		if d.Meta.UI.ResourceURI != d.Meta.Legacy {
			t.Errorf("%s links %q (ui.resourceUri) and %q (ui/resourceUri)", d.Name, d.Meta.UI.ResourceURI, d.Meta.Legacy)
		}
		out[d.Name] = d.Meta.UI.ResourceURI
	}
	return out
}

// appsRead reads a UI resource as a host does: one content, its URI the link, the app's
// MIME type, and the HTML.
func appsRead(t *testing.T, s *rawSession, uri string) string {
	t.Helper()
	a := s.request(t, nil, "resources/read", map[string]any{"uri": uri})
	if a.Reply == nil || a.Reply.Error != nil {
		t.Fatalf("resources/read %s: %s", uri, a)
	}
	var res struct {
		Contents []struct {
			URI      string `json:"uri"`
			MimeType string `json:"mimeType"`
			Text     string `json:"text"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(a.Reply.Result, &res); err != nil || len(res.Contents) != 1 {
		t.Fatalf("resources/read %s: %v: %.300s", uri, err, a.Reply.Result)
	}
	c := res.Contents[0]
	if c.URI != uri || c.MimeType != appsMimeType {
		t.Errorf("resources/read %s: content uri %q, mimeType %q", uri, c.URI, c.MimeType)
	}
	return c.Text
}

func TestAppsLinksThroughGateway(t *testing.T) {
	g := startGatewayChecked(t, `
log: {level: info, format: text}
clients:
  narrow: {match: ["apps-e2e-narrow"], name_max: 24}
servers:
`+appsServer(t, appsVanilla, "server-basic-vanillajs")+appsServer(t, appsReact, "server-basic-react"))
	html := map[string]string{appsVanilla: appsHTML(t, "server-basic-vanillajs"), appsReact: appsHTML(t, "server-basic-react")}
	for _, c := range []struct{ form, handshake, client string }{
		{"full", "full", "apps-e2e"}, {"thin", "thin", "apps-e2e"}, {"search", "search", "apps-e2e"}, {"shaped", "full", "apps-e2e-narrow"},
	} {
		t.Run(c.form, func(t *testing.T) {
			s := openAppsSession(t, g.URL, c.handshake, c.client)
			links := appsLinks(t, appsToolDefs(t, s, c.form))
			if len(links) != 2 {
				t.Fatalf("get-time tools and their links: %v", links)
			}
			seen := map[string]bool{}
			for name, link := range links {
				if c.form == "shaped" && len(name) > 24 {
					t.Errorf("%s: longer than the client's 24", name)
				}
				server := appsVanilla
				if !strings.Contains(link, appsVanilla) {
					server = appsReact
				}
				if seen[server] {
					t.Fatalf("both tools link %s's resource: %v", server, links)
				}
				seen[server] = true
				if got := appsRead(t, s, link); got != html[server] {
					t.Errorf("%s (%s) links %s, whose HTML is not %s's (%d bytes, want %d)", name, c.form, link, server, len(got), len(html[server]))
				}
				if a := s.callTool(t, name, nil); a.Reply == nil || a.Reply.Error != nil {
					t.Errorf("tools/call %s: %s", name, a)
				} else if text, isErr := toolResultText(a.Reply.Result); isErr || !strings.Contains(text, "T") {
					t.Errorf("tools/call %s: %s", name, a.Reply.Result)
				}
			}
			a := s.request(t, nil, "resources/list", map[string]any{})
			if a.Reply == nil || a.Reply.Error != nil {
				t.Fatalf("resources/list: %s", a)
			}
			for _, link := range links {
				if !strings.Contains(string(a.Reply.Result), `"uri":"`+link+`"`) {
					t.Errorf("resources/list lacks %s: %s", link, a.Reply.Result)
				}
			}
			// The upstreams' own URI names neither: it is not the gateway's name for either.
			if r := s.request(t, nil, "resources/read", map[string]any{"uri": "ui://get-time/mcp-app.html"}); r.Reply == nil || r.Reply.Error == nil {
				t.Errorf("the upstreams' own URI was read: %s", r)
			}
			// An app calls its server's tool by the server's name for it: with two such
			// servers the gateway cannot tell whose app calls, and says so.
			r := s.callTool(t, "get-time", nil)
			if r.Reply == nil || r.Reply.Error == nil {
				t.Fatalf("get-time by its own name with two servers: %s", r)
			}
			for name := range links {
				if !strings.Contains(r.Reply.Error.Message, name) {
					t.Errorf("get-time by its own name with two servers: the error does not name %s: %s", name, r)
				}
			}
		})
	}
}

// With one Apps server in the view, its app's calls by the server's own tool names reach
// it, and a host that declared no UI is not told of the extension.
func TestAppsOwnNameCall(t *testing.T) {
	g := startGatewayChecked(t, "log: {level: info, format: text}\nservers:\n"+appsServer(t, appsVanilla, "server-basic-vanillajs")+
		"  everything: {type: stdio, command: {{node}}, args: ["+yamlQuote(serverEverythingScript(t))+"]}\n")
	s := openAppsSession(t, g.URL, "full", "apps-e2e")
	a := s.callTool(t, "get-time", nil)
	if a.Reply == nil || a.Reply.Error != nil {
		t.Fatalf("get-time by its own name: %s", a)
	}
	if _, isErr := toolResultText(a.Reply.Result); isErr {
		t.Errorf("get-time by its own name: %s", a.Reply.Result)
	}
	// Only the Apps server's tools answer to their own names: everything's echo does not.
	if r := s.callTool(t, "echo", map[string]any{"message": "x"}); r.Reply == nil || r.Reply.Error == nil {
		t.Errorf("echo, a tool of a server without UI, by its own name: %s", r)
	}
	plain := openRawSession(t, g.URL, nil)
	init := rawInitialize(t, g.URL, nil)
	if init.Reply == nil || strings.Contains(string(init.Reply.Result), appsUI) {
		t.Errorf("a client without the UI extension was told of it: %s", init)
	}
	if names := plain.tools(t); !slices.Contains(names, appsVanilla+"__get-time") {
		t.Errorf("tools: %v", names)
	}
}
