package config

import (
	"strings"
	"testing"
)

const oauthBase = "version: 1\nservers:\n  crm:\n    type: http\n    url: https://crm.example.com/mcp\n"

// TestUpstreamAuthDefaults: an OAuth server is per user unless it says otherwise, and then
// its instances are per agent (and identity); the grant is the authorization code unless
// it says otherwise; a client credentials grant is per server.
func TestUpstreamAuthDefaults(t *testing.T) {
	cfg, ps, err := Parse([]byte(oauthBase + "    auth:\n      type: oauth\n"))
	if err != nil {
		t.Fatalf("%v", ps)
	}
	if d := cfg.Servers["crm"]; !d.Auth.PerUser() || d.ResolvedMode() != ModePerAgent {
		t.Errorf("the default: per %q, mode %q; want per user, per_agent", d.Auth.Per, d.ResolvedMode())
	}
	cfg, ps, err = Parse([]byte(oauthBase + "    auth:\n      type: oauth\n      per: server\n"))
	if err != nil {
		t.Fatalf("%v", ps)
	}
	a := cfg.Servers["crm"].Auth
	if a.PerUser() || a.Grant != GrantAuthorizationCode || cfg.Servers["crm"].ResolvedMode() != ModeShared {
		t.Errorf("defaults: %+v, mode %q", a, cfg.Servers["crm"].ResolvedMode())
	}
	u := cfg.UpstreamCredentials
	if u.RefreshBefore != DefaultRefreshBefore || u.FlowTimeout != DefaultFlowTimeout ||
		u.CallbackURL != "http://"+cfg.Listen+CallbackPath {
		t.Errorf("credential defaults: %+v", u)
	}
	cfg, ps, err = Parse([]byte(oauthBase + "    auth:\n      type: oauth\n      grant: client_credentials\n      client_id: c\n      client_secret: s\n"))
	if err != nil {
		t.Fatalf("%v", ps)
	}
	if a := cfg.Servers["crm"].Auth; a.Per != AuthPerServer {
		t.Errorf("client credentials default per %q, want server", a.Per)
	}
	if cfg, _, err := Parse([]byte(oauthBase)); err != nil || HasUpstreamOAuth(cfg.Servers) || cfg.Servers["crm"].Auth.OAuth() {
		t.Errorf("a server without auth is an OAuth server (%v)", err)
	}
}

// TestUpstreamAuthProblems: every wrong combination is an error that names the setting.
func TestUpstreamAuthProblems(t *testing.T) {
	cases := []struct{ name, yaml, want string }{
		{"unknown type", "    auth:\n      type: saml\n", `unknown type "saml"`},
		{"settings without type", "    auth:\n      client_id: x\n", "without type: oauth do nothing"},
		{"stdio", "", ""}, // placeholder replaced below
		{"static Authorization too", "    headers:\n      authorization: Bearer x\n    auth:\n      type: oauth\n", "both set the Authorization header"},
		{"unknown per", "    auth:\n      type: oauth\n      per: team\n", `unknown per "team"`},
		{"unknown grant", "    auth:\n      type: oauth\n      grant: password\n", `unknown grant "password"`},
		{"client credentials per user", "    auth:\n      type: oauth\n      per: user\n      grant: client_credentials\n      client_id: c\n      client_secret: s\n", "needs per: server"},
		{"client credentials without secret", "    auth:\n      type: oauth\n      grant: client_credentials\n      client_id: c\n", "needs client_id and client_secret or private_key"},
		{"secret and key", "    auth:\n      type: oauth\n      client_id: c\n      client_secret: s\n      private_key: k\n", "keep one"},
		{"secret without id", "    auth:\n      type: oauth\n      client_secret: s\n", "needs its client_id"},
		{"metadata URL over http", "    auth:\n      type: oauth\n      client_metadata_url: http://x.example/c.json\n", "is not an https URL with a path"},
		{"metadata URL without path", "    auth:\n      type: oauth\n      client_metadata_url: https://x.example\n", "is not an https URL with a path"},
		{"scope with a space", "    auth:\n      type: oauth\n      scopes: [\"a b\"]\n", "is not a scope token"},
		{"token exchange without endpoint", "    auth:\n      type: oauth\n      grant: token_exchange\n", "needs the security token service's token endpoint"},
		{"token exchange of API keys", "    auth:\n      type: oauth\n      grant: token_exchange\n      token_exchange:\n        endpoint: https://sts.example/token\nauth:\n  mode: api_key\n", "that is mcpgw's own key"},
		{"token exchange unknown subject type", "    auth:\n      type: oauth\n      grant: token_exchange\n      token_exchange:\n        endpoint: https://sts.example/token\n        subject_token_type: saml\n", `unknown subject_token_type "saml"`},
		{"ID-JAG without client", "    auth:\n      type: oauth\n      grant: token_exchange\n      token_exchange:\n        endpoint: https://sts.example/token\n        id_jag: true\n", "needs client_id and client_secret or private_key"},
		{"token exchange per server", "    auth:\n      type: oauth\n      per: server\n      grant: token_exchange\n      token_exchange:\n        endpoint: https://sts.example/token\n", "needs per: user"},
		{"token exchange settings unused", "    auth:\n      type: oauth\n      token_exchange:\n        endpoint: https://sts.example/token\n", "only read with grant: token_exchange"},
		{"per user shared", "    mode: shared\n    auth:\n      type: oauth\n", "cannot be shared by every caller"},
		{"per user pooled", "    mode: per_agent\n    pool: {warm: 2}\n    auth:\n      type: oauth\n", "no instance can wait ready in a warm pool"},
		{"agent shares a per-user server", "    auth:\n      type: oauth\nagents:\n  a1:\n    servers:\n      - name: crm\n        mode: shared\n", "cannot be shared by every caller"},
	}
	for _, c := range cases {
		doc := oauthBase + c.yaml
		if c.name == "stdio" {
			doc, c.want = "version: 1\nservers:\n  crm:\n    type: stdio\n    command: x\n    auth:\n      type: oauth\n", "needs an HTTP upstream"
		}
		_, ps, _ := Parse([]byte(doc))
		if !ps.HasErrors() || !strings.Contains(ps.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, ps, c.want)
		}
	}
}

// TestUpstreamCredentialsProblems: a Redis store with OAuth servers needs a shared key,
// and the callback URL must be one a browser can be sent to.
func TestUpstreamCredentialsProblems(t *testing.T) {
	auth := "    auth:\n      type: oauth\n      per: server\n"
	_, ps, _ := Parse([]byte("store: redis://127.0.0.1:6379/0\n" + oauthBase + auth))
	if !strings.Contains(ps.Error(), "upstream_credentials.keys") {
		t.Errorf("redis without keys: %v", ps)
	}
	_, ps, _ = Parse([]byte("store: redis://127.0.0.1:6379/0\nupstream_credentials:\n  keys: abc\n" + oauthBase + auth))
	if strings.Contains(ps.Error(), "upstream_credentials.keys") {
		t.Errorf("redis with keys: %v", ps)
	}
	for _, bad := range []string{"ftp://x/cb", "/oauth/callback", "https://gw.example/cb#frag"} {
		_, ps, _ = Parse([]byte("upstream_credentials:\n  callback_url: " + bad + "\n" + oauthBase + auth))
		if !strings.Contains(ps.Error(), "upstream_credentials.callback_url") {
			t.Errorf("callback %q: %v", bad, ps)
		}
	}
	if _, ps, err := Parse([]byte("upstream_credentials:\n  callback_url: https://gw.example/oauth/callback\n" + oauthBase + auth)); err != nil {
		t.Errorf("a good callback URL: %v", ps)
	}
}

// TestTokenExchangeDefaults: the caller's token is an access token unless said otherwise,
// and a token exchange with callers' identity provider tokens is taken with auth off.
func TestTokenExchangeDefaults(t *testing.T) {
	cfg, ps, err := Parse([]byte(oauthBase + "    auth:\n      type: oauth\n      grant: token_exchange\n      token_exchange:\n        endpoint: https://sts.example/token\n"))
	if err != nil {
		t.Fatalf("%v", ps)
	}
	if te := cfg.Servers["crm"].Auth.TokenExchange; te.SubjectTokenType != SubjectAccessToken || te.IDJAG {
		t.Errorf("defaults: %+v", te)
	}
}
