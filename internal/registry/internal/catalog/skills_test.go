package catalog

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestSkillURIRoundTrip(t *testing.T) {
	for _, up := range []string{"skill://pdf-processing/SKILL.md", "skill://team/code-review/references/A.md", "repo://x/y/SKILL.md"} {
		ex := SkillURI("docs", up)
		server, back, ok := SplitSkillURI(ex)
		if !ok || server != "docs" || back != up {
			t.Errorf("%s → %s → (%q, %q, %v)", up, ex, server, back, ok)
		}
	}
	if got := SkillURI("docs", "skill://pdf/SKILL.md"); got != "skill://docs/pdf/SKILL.md" {
		t.Errorf("SkillURI = %s", got)
	}
}

// TestSplitSkillURIRefusesClimbing: a client's URI that climbs out of a skill, or hides a
// slash, dot or backslash in percent-encoding, names no upstream URI.
func TestSplitSkillURIRefusesClimbing(t *testing.T) {
	for _, uri := range []string{
		"skill://docs/pdf/../../etc/passwd",
		"skill://docs/../other/pdf/SKILL.md",
		"skill://docs/pdf/./SKILL.md",
		"skill://docs/pdf%2F..%2F..%2Fsecret/SKILL.md",
		"skill://docs/pdf/%2e%2e/SKILL.md",
		"skill://docs/pdf%5c..%5csecret/SKILL.md",
		"skill://docs/pdf\\..\\secret/SKILL.md",
		"skill://docs/pdf//SKILL.md",
		"skill://docs/pdf/SKILL.md?x=1",
		"skill://docs/",
		"skill://docs",
		"skill:///pdf/SKILL.md",
		"no-scheme/pdf/SKILL.md",
	} {
		if s, up, ok := SplitSkillURI(uri); ok {
			t.Errorf("SplitSkillURI(%q) = %q, %q: want refused", uri, s, up)
		}
	}
}

func entry(uri, name string, files ...string) json.RawMessage {
	res := make([]map[string]any, 0, len(files))
	for _, f := range files {
		res = append(res, map[string]any{"uri": f, "digest": "sha256:" + strings.Repeat("a", 64), "size": 3})
	}
	b, _ := json.Marshal(map[string]any{"uri": uri, "frontmatter": map[string]any{"name": name, "description": "d"}, "resources": res})
	return b
}

func TestExposeSkill(t *testing.T) {
	sk, err := ExposeSkill("docs", entry("skill://pdf/SKILL.md", "pdf", "skill://pdf/SKILL.md", "skill://pdf/ref/A.md"))
	if err != nil {
		t.Fatal(err)
	}
	if sk.Exposed != "skill://docs/pdf/SKILL.md" || sk.Dir != "skill://pdf" || len(sk.Files) != 2 {
		t.Errorf("skill %+v", sk)
	}
	if !strings.Contains(string(sk.Def), `"uri":"skill://docs/pdf/ref/A.md"`) || strings.Contains(string(sk.Def), `"skill://pdf/`) {
		t.Errorf("def not renamed: %s", sk.Def)
	}
	v := BuildView("k", []Part{{Name: "docs", Cat: &Catalog{Skills: []*Skill{sk}}}}, nil, nil)
	if got, up := v.SkillOf("skill://docs/pdf/ref/A.md"); got != sk || up != "skill://pdf/ref/A.md" {
		t.Errorf("SkillOf = %v, %q", got, up)
	}
	for _, uri := range []string{"skill://docs/pdfx/SKILL.md", "skill://other/pdf/SKILL.md", "skill://docs/pdf/../x"} {
		if got, _ := v.SkillOf(uri); got != nil {
			t.Errorf("SkillOf(%s) found %s", uri, got.URI)
		}
	}
}

// TestExposeSkillRefuses: entries that are not skills, or whose files lie outside the
// skill, are refused: an upstream cannot route a client's read out of its skill.
func TestExposeSkillRefuses(t *testing.T) {
	for name, raw := range map[string]json.RawMessage{
		"not json":          json.RawMessage(`{`),
		"no name":           json.RawMessage(`{"uri":"skill://pdf/SKILL.md","frontmatter":{},"resources":[]}`),
		"name mismatch":     entry("skill://pdf/SKILL.md", "other"),
		"not SKILL.md":      entry("skill://pdf/README.md", "pdf"),
		"climbing uri":      entry("skill://x/../pdf/SKILL.md", "pdf"),
		"file outside":      entry("skill://pdf/SKILL.md", "pdf", "skill://other/SKILL.md"),
		"file climbing":     entry("skill://pdf/SKILL.md", "pdf", "skill://pdf/../other/SKILL.md"),
		"file encoded":      entry("skill://pdf/SKILL.md", "pdf", "skill://pdf/%2e%2e/x"),
		"resources garbage": json.RawMessage(`{"uri":"skill://pdf/SKILL.md","frontmatter":{"name":"pdf"},"resources":7}`),
		// Members are matched exactly, as clients' parsers match them.
		"oddly cased name": json.RawMessage(`{"uri":"skill://pdf/SKILL.md","frontmatter":{"NAME":"pdf"},"resources":[]}`),
		"oddly cased uri":  json.RawMessage(`{"URI":"skill://pdf/SKILL.md","frontmatter":{"name":"pdf"},"resources":[]}`),
		"name not string":  json.RawMessage(`{"uri":"skill://pdf/SKILL.md","frontmatter":{"name":["pdf"]},"resources":[]}`),
		"frontmatter text": json.RawMessage(`{"uri":"skill://pdf/SKILL.md","frontmatter":"name: pdf","resources":[]}`),
	} {
		if _, err := ExposeSkill("docs", raw); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if sk, err := ExposeSkill("docs", json.RawMessage(`{"uri":"skill://pdf/SKILL.md","frontmatter":{"name":"pdf"},"resources":"dynamic"}`)); err != nil || !sk.Dynamic {
		t.Errorf("dynamic: %v %v", sk, err)
	}
}

// TestExposeSkillReadsMembersAsClients: an entry with a member repeated in another case
// is read as a client reads it (the exact name), and one repeated exactly as JSON.parse
// reads it (the last): the name the gateway checks, pins and shows is the client's.
func TestExposeSkillReadsMembersAsClients(t *testing.T) {
	sk, err := ExposeSkill("docs", json.RawMessage(`{"uri":"skill://pdf/SKILL.md","URI":"skill://evil/SKILL.md","frontmatter":{"name":"pdf","Name":"evil"},"resources":[]}`))
	if err != nil || sk.Name != "pdf" || sk.URI != "skill://pdf/SKILL.md" || sk.Exposed != "skill://docs/pdf/SKILL.md" {
		t.Errorf("oddly cased twins: %+v, %v", sk, err)
	}
	sk, err = ExposeSkill("docs", json.RawMessage(`{"uri":"skill://evil/SKILL.md","uri":"skill://pdf/SKILL.md","frontmatter":{"name":"evil","name":"pdf"},"resources":[]}`))
	if err != nil || sk.Name != "pdf" || sk.URI != "skill://pdf/SKILL.md" {
		t.Errorf("repeated members: %+v, %v", sk, err)
	}
}

func TestSkillsSettings(t *testing.T) {
	dr := json.RawMessage(`{"directoryRead":true}`)
	if got := string(SkillsSettings([]json.RawMessage{dr, dr})); got != `{"directoryRead":true}` {
		t.Errorf("all directoryRead: %s", got)
	}
	if got := string(SkillsSettings([]json.RawMessage{dr, json.RawMessage(`{}`)})); got != `{}` {
		t.Errorf("one without: %s", got)
	}
}
