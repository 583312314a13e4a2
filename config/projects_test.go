package config

import (
	"slices"
	"strings"
	"testing"
)

func TestProjectsValidate(t *testing.T) {
	src := `listen: 127.0.0.1:0
store: memory
servers:
  a: {type: http, url: "http://127.0.0.1:9/mcp"}
projects:
  p:
    name: P
    servers: [a, nope]
    overrides: {ghost: true}
tasks:
  t1: {enabled_mcp_servers: [a], project: missing}
  t2: {enabled_mcp_servers: [a], project: p}
`
	_, _, err := Parse([]byte(src))
	if err == nil {
		t.Fatal("a config with unknown names in its projects and tasks parses")
	}
	for _, want := range []string{
		`projects.p.servers[1]: unknown server "nope"`,
		`projects.p.overrides.ghost: unknown server "ghost"`,
		`tasks.t1.project: unknown project "missing"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("validate lacks %q:\n%v", want, err.Error())
		}
	}
	if strings.Contains(err.Error(), "tasks.t2") {
		t.Errorf("t2 names a project that exists:\n%v", err.Error())
	}
}

func TestProjectServers(t *testing.T) {
	cfg := &Config{
		Servers: map[string]*ServerDef{"a": {Type: "http"}, "b": {Type: "http"}, "off": {Type: "http", DefaultEnabled: new(bool)}},
		Projects: map[string]*ProjectConfig{
			"list":  {Servers: []string{"b", "gone"}},
			"empty": {Servers: []string{}},
			"over":  {Overrides: map[string]bool{"off": true, "a": false}},
		},
	}
	for id, want := range map[string][]string{"list": {"b"}, "empty": {}, "over": {"b", "off"}} {
		got, ok := cfg.ProjectServers(id)
		if !ok || !slices.Equal(got, want) {
			t.Errorf("%s: %v %v, want %v", id, got, ok, want)
		}
	}
	if _, ok := cfg.ProjectServers("none"); ok {
		t.Error("an unknown project is found")
	}
}
