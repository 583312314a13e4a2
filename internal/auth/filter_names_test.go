package auth

import (
	"testing"

	"github.com/mcpgw/mcpgw/config"
)

// A tool's globs hold for each of its names: a tool whose exposed name naming.max_length
// shortened (dropping or cutting the server part) is still denied by a "server__*" deny
// glob and admitted by a "server__*" allow glob written against its plain name.
func TestToolGlobsMatchEveryName(t *testing.T) {
	cfg := &config.Config{Agents: map[string]*config.AgentConfig{
		"deny":  {Servers: []config.AgentUse{{Name: "gh"}}, Tools: config.ToolFilter{Deny: []string{"gh__delete_*"}}},
		"allow": {Servers: []config.AgentUse{{Name: "gh"}}, Tools: config.ToolFilter{Allow: []string{"gh__read_*"}}},
	}}
	const shortened, plain = "delete_repository_and_all_i_2b2db916", "gh__delete_repository_and_all_its_contents"
	deny := NewFilter(cfg, &Identity{Agent: "deny"})
	if ok, _ := deny.Tool("gh", shortened, false); !ok {
		t.Fatal("without its plain name, the shortened tool should pass the deny glob (the case the fix is for)")
	}
	if ok, why := deny.Tool("gh", shortened, false, plain); ok {
		t.Errorf("a deny glob over the plain name did not deny the shortened tool: %s", why)
	}
	allow := NewFilter(cfg, &Identity{Agent: "allow"})
	if ok, why := allow.Tool("gh", "read_a_very_long_thing_1234abcd", true, "gh__read_a_very_long_thing"); !ok {
		t.Errorf("an allow glob over the plain name did not admit the shortened tool: %s", why)
	}
	if ok, _ := allow.Tool("gh", "gh__write_x", false, "gh__write_x"); ok {
		t.Error("an allow glob admitted a tool none of whose names it matches")
	}
}
