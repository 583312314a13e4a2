package auth

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/config"
)

// TestCredentialNarrowsConnections: the connection scope a session's plugin tools are
// generated for is the narrower of the agent's and the credential's; read-only from either
// side holds.
func TestCredentialNarrowsConnections(t *testing.T) {
	cfg := &config.Config{Agents: map[string]*config.AgentConfig{
		"scoped": {ConnectionScope: []string{"prod", "staging"}},
		"free":   {},
		"ro":     {ReadOnly: true},
	}}
	tests := []struct {
		agent    string
		claims   *Claims
		want     []string // nil: every connection
		readOnly bool
	}{
		{"scoped", nil, []string{"prod", "staging"}, false},
		{"scoped", &Claims{ConnectionScope: []string{"staging", "dev"}}, []string{"staging"}, false},
		{"scoped", &Claims{ConnectionScope: []string{"dev"}}, []string{}, false},
		{"scoped", &Claims{ConnectionScope: []string{}}, []string{}, false},
		{"scoped", &Claims{}, []string{"prod", "staging"}, false},
		{"free", &Claims{ConnectionScope: []string{"staging", "dev", "dev"}}, []string{"dev", "staging"}, false},
		{"free", &Claims{ReadOnly: true}, nil, true},
		{"ro", &Claims{ConnectionScope: []string{"dev"}}, []string{"dev"}, true},
		{"free", nil, nil, false},
	}
	keys := map[string]string{}
	for _, tc := range tests {
		f := NewFilter(cfg, &Identity{Agent: tc.agent, Claims: tc.claims})
		sc := f.PluginScope()
		if !reflect.DeepEqual(sc.Connections, tc.want) || sc.ReadOnly != tc.readOnly {
			t.Errorf("agent %s, claims %+v: scope %#v read-only %v, want %#v %v", tc.agent, tc.claims, sc.Connections, sc.ReadOnly, tc.want, tc.readOnly)
		}
		// Different scopes never share a cached view.
		if prev, ok := keys[f.Key()]; ok && prev != strings.Join(tc.want, ",")+" "+map[bool]string{true: "ro"}[tc.readOnly] {
			t.Errorf("filters of different scopes share the key %q", f.Key())
		}
		keys[f.Key()] = strings.Join(tc.want, ",") + " " + map[bool]string{true: "ro"}[tc.readOnly]
	}
}

func TestJWTConnectionScopeClaim(t *testing.T) {
	cfg := jwtTestConfig(t)
	v := newTestVerifier(t, cfg)
	c, err := v.Verify(sign(t, "HS256", []byte(hsSecret), nil, std(set("mcpgw", map[string]any{"connection_scope": []string{"prod"}, "read_only": true}))))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.ConnectionScope, []string{"prod"}) || !c.ReadOnly {
		t.Errorf("claims = %+v, want connection scope [prod] and read-only", c)
	}
	c, err = v.Verify(sign(t, "HS256", []byte(hsSecret), nil, std(set("mcpgw", map[string]any{"connection_scope": []string{}}))))
	if err != nil || c.ConnectionScope == nil || len(c.ConnectionScope) != 0 {
		t.Errorf("an empty connection_scope = %#v, %v; want an empty, non-nil scope (no connection)", c, err)
	}
	for _, bad := range []any{"prod", []any{1}, map[string]any{}} {
		_, err := v.Verify(sign(t, "HS256", []byte(hsSecret), nil, std(set("mcpgw", map[string]any{"connection_scope": bad}))))
		if err == nil || !strings.Contains(err.Error(), "malformed mcpgw.connection_scope claim") {
			t.Errorf("connection_scope %v: err = %v", bad, err)
		}
	}
	// IssueJWT writes it, and a narrowed token is another principal than a plain one.
	cfg.Issuer, cfg.Audience = "", ""
	tok, err := IssueJWT(cfg, "bot", time.Hour, map[string]any{"connection_scope": []string{"prod"}})
	if err != nil {
		t.Fatal(err)
	}
	v2, _ := NewJWTVerifier(cfg)
	c, err = v2.Verify(tok)
	if err != nil || !reflect.DeepEqual(c.ConnectionScope, []string{"prod"}) {
		t.Fatalf("issued token: %+v, %v", c, err)
	}
	if narrowDigest(c) == narrowDigest(&Claims{Agent: "bot"}) {
		t.Error("a token narrowed to some connections has the principal of an unnarrowed one")
	}
}

// TestAPIKeyScope: a key in the config or the key file carries read_only and
// connection_scope into the identity's claims.
func TestAPIKeyScope(t *testing.T) {
	kf, err := OpenKeyFile(filepath.Join(t.TempDir(), "keys.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	fileKey, rec, err := kf.AddScoped("a1", KeyScope{ReadOnly: true, ConnectionScope: []string{"staging"}})
	if err != nil || !rec.ReadOnly || !reflect.DeepEqual(rec.ConnectionScope, []string{"staging"}) {
		t.Fatalf("AddScoped: %+v, %v", rec, err)
	}
	plainKey, _, err := kf.Add("a1")
	if err != nil {
		t.Fatal(err)
	}
	cfgKey, sum := NewAPIKey()
	cfg := &config.Config{Auth: config.AuthConfig{Mode: "api_key", APIKeys: []config.APIKeyDef{{Agent: "a1", SHA256: sum, ConnectionScope: []string{"prod"}}}},
		Agents: map[string]*config.AgentConfig{"a1": {ConnectionScope: []string{"prod", "staging"}}}}
	a, err := NewAuthenticator(cfg, kf)
	if err != nil {
		t.Fatal(err)
	}
	identify := func(key string) *Identity {
		r := httptest.NewRequest("POST", "/mcp", nil)
		r.Header.Set("Authorization", "Bearer "+key)
		id, fail := a.Authenticate(context.Background(), r)
		if fail != nil {
			t.Fatalf("authenticate: %v", fail)
		}
		return id
	}
	for _, tc := range []struct {
		name, key string
		want      []string
		readOnly  bool
	}{
		{"key file, scoped", fileKey, []string{"staging"}, true},
		{"key file, plain", plainKey, []string{"prod", "staging"}, false},
		{"config key", cfgKey, []string{"prod"}, false},
	} {
		id := identify(tc.key)
		sc := NewFilter(cfg, id).PluginScope()
		if !reflect.DeepEqual(sc.Connections, tc.want) || sc.ReadOnly != tc.readOnly {
			t.Errorf("%s: scope %v read-only %v, want %v %v", tc.name, sc.Connections, sc.ReadOnly, tc.want, tc.readOnly)
		}
	}
	if identify(fileKey).Principal == identify(plainKey).Principal {
		t.Error("two keys share a principal")
	}
}
