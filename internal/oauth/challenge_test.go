package oauth

import (
	"net/http"
	"slices"
	"testing"
)

func TestParseChallenge(t *testing.T) {
	cases := []struct {
		name   string
		lines  []string
		scheme string
		params map[string]string
	}{
		{
			name:   "sdk 401",
			lines:  []string{`Bearer error="invalid_token", error_description="Missing Authorization header", resource_metadata="http://localhost:1/.well-known/oauth-protected-resource/mcp"`},
			scheme: "Bearer",
			params: map[string]string{"error": "invalid_token", "error_description": "Missing Authorization header", "resource_metadata": "http://localhost:1/.well-known/oauth-protected-resource/mcp"},
		},
		{
			name:   "odd casing, tokens and spaces",
			lines:  []string{`bEaReR  Scope = "a b" ,ERROR=insufficient_scope`},
			scheme: "bEaReR",
			params: map[string]string{"scope": "a b", "error": "insufficient_scope"},
		},
		{
			name:   "comma and escaped quote inside a quoted value",
			lines:  []string{`Bearer error_description="bad, very \"bad\"", scope="x"`},
			scheme: "Bearer",
			params: map[string]string{"error_description": `bad, very "bad"`, "scope": "x"},
		},
		{
			name:   "Bearer after another challenge on one line",
			lines:  []string{`Basic realm="r", Bearer realm="api", scope="s1"`},
			scheme: "Bearer",
			params: map[string]string{"realm": "api", "scope": "s1"},
		},
		{
			name:   "Bearer on a second line; token68 on the first",
			lines:  []string{`Negotiate dXNlcjpwYXNz==`, `Bearer resource_metadata="https://h/prm"`},
			scheme: "Bearer",
			params: map[string]string{"resource_metadata": "https://h/prm"},
		},
		{
			name:   "repeated parameter: first wins",
			lines:  []string{`Bearer scope="first", scope="second"`},
			scheme: "Bearer",
			params: map[string]string{"scope": "first"},
		},
		{
			name:   "DPoP when there is no Bearer",
			lines:  []string{`Basic realm="x"`, `DPoP resource_metadata="https://h/prm", algs="ES256"`},
			scheme: "DPoP",
			params: map[string]string{"resource_metadata": "https://h/prm", "algs": "ES256"},
		},
		{
			name:   "unterminated quote runs to the end",
			lines:  []string{`Bearer scope="a b`},
			scheme: "Bearer",
			params: map[string]string{"scope": "a b"},
		},
		{
			name:   "bare scheme",
			lines:  []string{`Bearer`},
			scheme: "Bearer",
			params: map[string]string{},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{"Www-Authenticate": tc.lines}
			c := ParseChallenge(h)
			if c.Scheme != tc.scheme {
				t.Fatalf("scheme %q, want %q (all: %+v)", c.Scheme, tc.scheme, ParseChallenges(h))
			}
			if len(c.Params) != len(tc.params) {
				t.Fatalf("params %q, want %q", c.Params, tc.params)
			}
			for k, v := range tc.params {
				if c.Params[k] != v {
					t.Errorf("%s = %q, want %q", k, c.Params[k], v)
				}
			}
		})
	}
}

func TestParseChallengeHelpers(t *testing.T) {
	h := http.Header{}
	h.Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="mcp:write  mcp:read", resource_metadata="https://h/x"`)
	c := ParseChallenge(h)
	if !c.InsufficientScope() || c.ErrorCode() != "insufficient_scope" {
		t.Errorf("not insufficient_scope: %+v", c)
	}
	if got := c.Scopes(); !slices.Equal(got, []string{"mcp:write", "mcp:read"}) {
		t.Errorf("scopes %q", got)
	}
	if c.ResourceMetadata() != "https://h/x" {
		t.Errorf("resource_metadata %q", c.ResourceMetadata())
	}
}

func TestParseChallengeHandBuiltHeaderMap(t *testing.T) {
	// A map written without canonical keys (a proxy's, a test's) is still read.
	h := http.Header{"www-authenticate": {`Bearer scope="s"`}}
	if got := ParseChallenge(h).Scopes(); !slices.Equal(got, []string{"s"}) {
		t.Errorf("scopes %q", got)
	}
}

func TestParseChallengeAbsentOrJunk(t *testing.T) {
	if c := ParseChallenge(http.Header{}); c.Scheme != "" || c.Params != nil {
		t.Errorf("absent header gave %+v", c)
	}
	for _, junk := range []string{"", ",,,", `"quoted", =x`, "=", "Bearer =", `Bearer a="`} {
		h := http.Header{"Www-Authenticate": {junk}}
		_ = ParseChallenges(h) // must not panic or loop
	}
	h := http.Header{"Www-Authenticate": {`=== , Bearer scope="ok"`}}
	if got := ParseChallenge(h).Scopes(); !slices.Equal(got, []string{"ok"}) {
		t.Errorf("after junk: scopes %q", got)
	}
}

func FuzzParseChallenges(f *testing.F) {
	f.Add(`Bearer error="invalid_token", scope="a b", resource_metadata="https://h/"`)
	f.Add(`Basic dXNlcg==, Bearer realm="x\"y"`)
	f.Add(`,,"=`)
	f.Fuzz(func(t *testing.T, line string) {
		for _, c := range ParseChallenges(http.Header{"Www-Authenticate": {line}}) {
			if c.Scheme == "" {
				t.Fatalf("challenge without a scheme from %q", line)
			}
		}
	})
}
