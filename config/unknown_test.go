package config

import (
	"strings"
	"testing"
)

// TestUnknownKeyNamesPathAndNearest: a mistyped key is reported by its path in the file
// and its line, with the nearest known key, and no Go type name.
func TestUnknownKeyNamesPathAndNearest(t *testing.T) {
	_, ps, err := Parse([]byte("listen: 127.0.0.1:8080\nnaming:\n  prefix: always\n\n  seperator: \"__\"\n" +
		"servers:\n  a: {type: stdio, command: x, argz: [y]}\nagents:\n  a1: {servers: [a], tols: {allow: [\"*\"]}}\n" +
		"executors:\n  e: {type: local_pc, mcp_policy: {allow_ftp: true}}\nzzz: 1\n"))
	if err == nil {
		t.Fatal("a config with mistyped keys parsed")
	}
	got := ps.Error()
	for _, want := range []string{
		`naming.seperator: line 5: unknown key (did you mean "separator"?)`,
		`servers.a.argz: line 7: unknown key (did you mean "args"?)`,
		`agents.a1.tols: line 9: unknown key (did you mean "tools"?)`,
		`executors.e.mcp_policy.allow_ftp: line 11: unknown key`,
		`zzz: line 12: unknown key`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("problems lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "config.") || strings.Contains(got, "not found in type") {
		t.Errorf("problems name Go types:\n%s", got)
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"a", "", 1}, {"seperator", "separator", 1}, {"comand", "command", 1}, {"kitten", "sitting", 3}} {
		if got := editDistance(c.a, c.b); got != c.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
	}
}
