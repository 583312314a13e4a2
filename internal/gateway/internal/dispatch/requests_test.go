package dispatch

import (
	"testing"
)

func TestTemplateMatches(t *testing.T) {
	tests := []struct {
		tmpl, uri string
		want      bool
	}{
		// no variables: exact match
		{"test://static/resource", "test://static/resource", true},
		{"test://static/resource", "test://static/resource/1", false},
		{"test://static/resource", "test://static/resourc", false},
		{"", "", true},
		{"", "x", false},
		// one variable at the end
		{"test://template/{id}/data", "test://template/42/data", true},
		{"test://template/{id}/data", "test://template/42/other", false},
		{"test://template/{id}/data", "test://template/42/data/more", false},
		{"file:///{path}", "file:///etc/hosts", true},
		{"file:///{path}", "http:///etc/hosts", false},
		{"file:///{path}", "file:///", true}, // an empty value is a value
		// several variables and literals between them
		{"repo://{owner}/{name}/readme", "repo://golang/go/readme", true},
		{"repo://{owner}/{name}/readme", "repo://golang/readme", false},
		{"str://{a}-{b}", "str://x-y-z", true},
		{"docs://{name}.md", "docs://v1.2.md", true},
		{"docs://{name}.md", "docs://v1.2.txt", false},
		// adjacent variables and operators
		{"x://{a}{b}", "x://anything", true},
		{"search://{term}{?limit}", "search://go?limit=3", true},
		{"search://{term}{?limit}", "search://go", true},
		{"{+base}/items", "https://h/items", true},
		// malformed templates never match
		{"test://{unclosed", "test://x", false},
		{"test://{unclosed", "test://{unclosed", false},
	}
	for _, tt := range tests {
		if got := templateMatches(tt.tmpl, tt.uri); got != tt.want {
			t.Errorf("templateMatches(%q, %q) = %v, want %v", tt.tmpl, tt.uri, got, tt.want)
		}
	}
}

// TestTemplateMatchesBacktracks: a literal after a variable may also occur inside the
// variable's value ({+path} keeps slashes); the match must not stop at its first
// occurrence.
func TestTemplateMatchesBacktracks(t *testing.T) {
	for _, tt := range []struct{ tmpl, uri string }{
		{"file:///{+path}/README", "file:///a/README/b/README"},
		{"x://{a}b", "x://1b1b"},
	} {
		if !templateMatches(tt.tmpl, tt.uri) {
			t.Errorf("templateMatches(%q, %q) = false, want true", tt.tmpl, tt.uri)
		}
	}
}
