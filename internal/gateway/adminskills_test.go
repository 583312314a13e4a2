package gateway

import (
	"encoding/json"
	"testing"
)

// TestSkillDescription: the description GET /api/skills (and the web UI) shows is the one
// a client reads from the same entry: members matched exactly, as a client's JSON parser
// does, not case-insensitively as encoding/json would, so an upstream cannot show the
// admin one description and the model another; a repeated member is read as JSON.parse
// reads it (the last); an escaped key is the key it spells.
func TestSkillDescription(t *testing.T) {
	for _, c := range []struct{ entry, want string }{
		{`{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a","description":"Plain"}}`, "Plain"},
		{`{"frontmatter":{"description":"What clients read","DESCRIPTION":"what the admin would read"}}`, "What clients read"},
		{`{"frontmatter":{"Description":"only oddly cased"}}`, ""},
		{`{"Frontmatter":{"description":"not the frontmatter"},"frontmatter":{"description":"the frontmatter"}}`, "the frontmatter"},
		{`{"frontmatter":{"description":"first","description":"last"}}`, "last"},
		{`{"frontmatter":{"descr\u0069ption":"escaped key"}}`, "escaped key"},
		{`{"frontmatter":{"description":42}}`, ""},
		{`{"frontmatter":"text"}`, ""},
		{`not json`, ""},
	} {
		if got := skillDescription(json.RawMessage(c.entry)); got != c.want {
			t.Errorf("skillDescription(%s) = %q, want %q", c.entry, got, c.want)
		}
	}
}
