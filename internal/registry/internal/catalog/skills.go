package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpgw/mcpgw/internal/wire"
)

// Skills (the io.modelcontextprotocol/skills extension, SEP-2640): an upstream lists
// skill entries with skills/list, each the URI of its SKILL.md, the SKILL.md's
// frontmatter and its files ({uri, digest, size}, or "dynamic"). The gateway renames a
// skill's URIs so that two servers' skills never collide: the server's name becomes the
// first segment of the skill path, so skill://pdf-processing/SKILL.md of server "docs" is
// skill://docs/pdf-processing/SKILL.md. The skill's name (the path's last segment) stays
// what the frontmatter says, as the extension requires; any scheme is renamed the same
// way (scheme://rest becomes scheme://server/rest).

// SkillsExtension is the extension id a server declares to serve skills.
const SkillsExtension = "io.modelcontextprotocol/skills"

// MaxSkills bounds the skills one server may list: an upstream that lists more has the
// rest left out (a problem of its catalogue says so).
const MaxSkills = 4096

// MaxSkillFiles bounds the files of one skill entry (the extension's own limit is 512,
// which servers SHOULD keep).
const MaxSkillFiles = 1024

// Skill is one upstream skill as exposed.
type Skill struct {
	Server  string
	URI     string // the upstream's URI of the skill's SKILL.md
	Exposed string // the URI clients see
	Name    string // the frontmatter name
	Dir     string // the upstream's URI of the skill's directory (URI without /SKILL.md)
	Dynamic bool   // resources is "dynamic": the files are not listed
	// Files are the files the entry lists, by upstream URI: digest and size.
	Files map[string]SkillFile
	// Def is the entry as clients see it (URIs renamed); Upstream the entry as the
	// upstream listed it, which integrity pins.
	Def      json.RawMessage
	Upstream json.RawMessage
	Hash     string // the fingerprint of the upstream's entry (set by integrity)
}

// SkillFile is what a skill entry lists of one file: the digest of its bytes
// (sha256:<hex>) and their count (-1: not given).
type SkillFile struct {
	Digest string
	Size   int64
}

// Digests are the files the entry lists, by upstream URI.
func (s *Skill) Digests() map[string]SkillFile { return s.Files }

// SkillURI is the URI clients see for an upstream URI of server's skills: the server
// becomes the first path segment after the scheme. A URI without "://" is not renamed.
func SkillURI(server, uri string) string {
	i := strings.Index(uri, "://")
	if i < 0 {
		return uri
	}
	return uri[:i+3] + server + "/" + uri[i+3:]
}

// SplitSkillURI is SkillURI backwards: the server a client's URI names and the upstream's
// URI. ok is false when uri names no server, or its rest is empty or not a clean path
// (a segment "." or "..", an empty one, or an encoded slash, dot or backslash): such a
// URI reaches no upstream.
func SplitSkillURI(uri string) (server, upstream string, ok bool) {
	i := strings.Index(uri, "://")
	if i < 0 {
		return "", "", false
	}
	rest := uri[i+3:]
	j := strings.IndexByte(rest, '/')
	if j <= 0 || j == len(rest)-1 {
		return "", "", false
	}
	server, path := rest[:j], rest[j+1:]
	if !cleanPath(path) {
		return "", "", false
	}
	return server, uri[:i+3] + path, true
}

// cleanPath reports whether p is a path of plain segments: none empty, "." or "..", no
// backslash, query or fragment, and no percent-encoded slash, backslash or dot.
func cleanPath(p string) bool {
	if strings.ContainsAny(p, "\\?#") {
		return false
	}
	lower := strings.ToLower(p)
	for _, enc := range []string{"%2f", "%5c", "%2e", "%00"} {
		if strings.Contains(lower, enc) {
			return false
		}
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

// Within reports whether the upstream URI uri is the skill's SKILL.md or a file or
// directory inside the skill's directory.
func (s *Skill) Within(uri string) bool {
	return uri == s.URI || uri == s.Dir || strings.HasPrefix(uri, s.Dir+"/")
}

// ExposeSkill reads one skills/list entry of server: its URIs are renamed (SkillURI),
// everything else is kept as listed. An entry without a SKILL.md URI of a clean path, or
// whose files lie outside the skill's directory, is refused.
func ExposeSkill(server string, raw json.RawMessage) (*Skill, error) {
	// Members are matched exactly, the last of a repeated one winning, as a client's JSON
	// parser reads them: encoding/json would also take "URI" or "NAME", and the gateway
	// would then route, pin and show another skill than its clients read.
	var head struct {
		URI                    string
		Frontmatter, Resources json.RawMessage
	}
	err := wire.Members(raw, func(k string, v []byte) error {
		switch k {
		case "uri":
			head.URI, _ = wire.String(v)
		case "frontmatter":
			head.Frontmatter = v
		case "resources":
			head.Resources = v
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("a skill entry that does not parse was skipped")
	}
	var fm struct{ Name string }
	if wire.Members(head.Frontmatter, func(k string, v []byte) error {
		if k == "name" {
			fm.Name, _ = wire.String(v)
		}
		return nil
	}) != nil || fm.Name == "" {
		return nil, fmt.Errorf("skill %q: no frontmatter name; skipped", head.URI)
	}
	dir, ok := strings.CutSuffix(head.URI, "/SKILL.md")
	if !ok || !strings.Contains(dir, "://") || !cleanPath(dir[strings.Index(dir, "://")+3:]) || dir[strings.LastIndexByte(dir, '/')+1:] != fm.Name {
		return nil, fmt.Errorf("skill %q: its uri is not <scheme>://<path>/%s/SKILL.md; skipped", head.URI, fm.Name)
	}
	sk := &Skill{Server: server, URI: head.URI, Exposed: SkillURI(server, head.URI), Name: fm.Name, Dir: dir, Files: map[string]SkillFile{}, Upstream: Compact(raw)}
	res, err := sk.renameFiles(head.Resources)
	if err != nil {
		return nil, err
	}
	sk.Def = renameSkillMembers(sk.Upstream, sk.Exposed, res)
	return sk, nil
}

// renameFiles reads the entry's resources and returns them renamed ("dynamic" as is).
func (sk *Skill) renameFiles(raw json.RawMessage) (json.RawMessage, error) {
	if s, ok := wire.String(raw); ok && s == "dynamic" {
		sk.Dynamic = true
		return raw, nil
	}
	var files []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &files); err != nil {
		return nil, fmt.Errorf("skill %q: resources is neither a list nor \"dynamic\"; skipped", sk.URI)
	}
	if len(files) > MaxSkillFiles {
		return nil, fmt.Errorf("skill %q lists %d files, more than %d; skipped", sk.URI, len(files), MaxSkillFiles)
	}
	for _, f := range files {
		var uri string
		if json.Unmarshal(f["uri"], &uri) != nil || !sk.Within(uri) || uri == sk.Dir {
			return nil, fmt.Errorf("skill %q lists a file outside its directory; skipped", sk.URI)
		}
		if p := uri[strings.Index(uri, "://")+3:]; !cleanPath(p) {
			return nil, fmt.Errorf("skill %q lists a file %q that is not a clean path; skipped", sk.URI, uri)
		}
		var sf SkillFile
		_ = json.Unmarshal(f["digest"], &sf.Digest)
		if json.Unmarshal(f["size"], &sf.Size) != nil {
			sf.Size = -1
		}
		sk.Files[uri] = sf
		f["uri"], _ = json.Marshal(SkillURI(sk.Server, uri))
	}
	b, err := json.Marshal(files)
	return b, err
}

// renameSkillMembers is the entry raw with uri and resources replaced, members in order.
func renameSkillMembers(raw json.RawMessage, uri string, resources json.RawMessage) json.RawMessage {
	var b wire.Object
	_ = wire.Members(raw, func(k string, v []byte) error {
		switch k {
		case "uri":
			b.Str("uri", uri)
		case "resources":
			b.Raw("resources", resources)
		default:
			b.Raw(k, v)
		}
		return nil
	})
	return b.Bytes()
}

// SkillsSettings is the io.modelcontextprotocol/skills capability a gateway declares for
// servers that declare it with settings: directoryRead only when every one of them does.
func SkillsSettings(settings []json.RawMessage) json.RawMessage {
	if len(settings) == 0 {
		return nil
	}
	for _, s := range settings {
		var v struct {
			DirectoryRead bool `json:"directoryRead"`
		}
		if json.Unmarshal(s, &v) != nil || !v.DirectoryRead {
			return json.RawMessage(`{}`)
		}
	}
	return json.RawMessage(`{"directoryRead":true}`)
}

// Skill finds a skill by the URI clients see.
func (v *View) Skill(uri string) *Skill { return v.skillBy[uri] }

// SkillOf finds the skill of the view that holds a client's URI (its SKILL.md, or a file
// or directory inside it) and returns it with the upstream's URI; nil when none does.
func (v *View) SkillOf(uri string) (*Skill, string) {
	server, up, ok := SplitSkillURI(uri)
	if !ok {
		return nil, ""
	}
	for _, sk := range v.skillsOf[server] {
		if sk.Within(up) {
			return sk, up
		}
	}
	return nil, ""
}

// addSkills adds the skills of cat that a admits (a held skill is left out).
func (v *View) addSkills(cat *Catalog, a Admission) {
	for _, sk := range cat.Skills {
		if _, dup := v.skillBy[sk.Exposed]; dup {
			continue
		}
		if sk = a.Skill(sk); sk == nil {
			continue
		}
		if v.skillBy == nil {
			v.skillBy, v.skillsOf = map[string]*Skill{}, map[string][]*Skill{}
		}
		v.skillBy[sk.Exposed] = sk
		v.skillsOf[sk.Server] = append(v.skillsOf[sk.Server], sk)
		v.Skills = append(v.Skills, sk)
	}
}

// skillsEqual reports whether two catalogues list the same skills.
func skillsEqual(a, b []*Skill) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i].Upstream, b[i].Upstream) {
			return false
		}
	}
	return true
}

// RenameURI is the resource definition def with its uri member set to uri.
func RenameURI(def json.RawMessage, uri string) json.RawMessage {
	var b wire.Object
	_ = wire.Members(def, func(k string, v []byte) error {
		if k == "uri" {
			b.Str("uri", uri)
		} else {
			b.Raw(k, v)
		}
		return nil
	})
	return b.Bytes()
}
