package oauth

import "testing"

func TestResourceMatches(t *testing.T) {
	cases := []struct {
		resource, server string
		want             bool
	}{
		{"https://h/mcp", "https://h/mcp", true},
		{"https://h", "https://h/mcp", true},
		{"https://h/", "https://h/mcp", true},
		{"https://H:443/mcp", "https://h/mcp", true},
		{"https://h/api", "https://h/api/mcp", true},
		{"https://h/mcp/", "https://h/mcp", true},
		{"https://h/m", "https://h/mcp", false},
		{"https://h/mcp/deeper", "https://h/mcp", false},
		{"https://evil.example.com/mcp", "https://h/mcp", false},
		{"http://h/mcp", "https://h/mcp", false},
		{"https://h:8443/mcp", "https://h/mcp", false},
		{"https://h/mcp#frag", "https://h/mcp", false},
		{"https://h/mcp?tenant=a", "https://h/mcp?tenant=b", false},
		{"https://h/mcp?tenant=a", "https://h/mcp?tenant=a", true},
		{"/mcp", "https://h/mcp", false},
		{"https://u@h/mcp", "https://h/mcp", false},
	}
	for _, tc := range cases {
		if got := ResourceMatches(tc.resource, tc.server); got != tc.want {
			t.Errorf("ResourceMatches(%q, %q) = %v", tc.resource, tc.server, got)
		}
	}
}

func TestCanonicalResource(t *testing.T) {
	cases := map[string]string{
		"HTTPS://Example.COM/MCP#x": "https://example.com/MCP",
		"https://h":                 "https://h",
		"http://localhost:8080/mcp": "http://localhost:8080/mcp",
	}
	for in, want := range cases {
		got, err := CanonicalResource(in)
		if err != nil || got != want {
			t.Errorf("CanonicalResource(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := CanonicalResource("/relative"); err == nil {
		t.Error("relative URL accepted")
	}
}
