package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"mime"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// file is one file of a skill: its URI, bytes and type.
type file struct {
	URI      string
	Body     []byte
	MimeType string
}

// skill is one directory with a SKILL.md: its entry as skills/list serves it.
type skill struct {
	Path        string // the skill path: the directory relative to the root, '/'-separated
	URI         string // skill://<path>/SKILL.md
	Frontmatter map[string]any
	Files       []file
}

// tree is every skill under the root as of one scan, and the directories they hold.
type tree struct {
	Skills []*skill
	files  map[string]file
	dirs   map[string][]child // directory URI → its direct children
	listed map[string]bool    // URIs already a child in dirs
	byURI  map[string]*skill  // skills by the URI of their SKILL.md
}

// child is a direct child of a directory: a file or a subdirectory.
type child struct {
	URI string
	Dir bool
}

// scan reads the skills under root, with the generated ones after them.
func scan(root string, gen []*skill) (*tree, error) {
	t := &tree{files: map[string]file{}, dirs: map[string][]child{}, listed: map[string]bool{}, byURI: map[string]*skill{}}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || d.Name() != "SKILL.md" {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil || rel == "." {
			return nil // a SKILL.md at the root has no skill path
		}
		sk, err := readSkill(root, filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		t.Skills = append(t.Skills, sk)
		return nil
	})
	if err != nil {
		return nil, err
	}
	t.Skills = append(t.Skills, gen...)
	sort.Slice(t.Skills, func(i, j int) bool { return t.Skills[i].URI < t.Skills[j].URI })
	for _, sk := range t.Skills {
		t.byURI[sk.URI] = sk
		for _, f := range sk.Files {
			t.files[f.URI] = f
			t.addParents(f.URI, "skill://"+sk.Path)
		}
	}
	for dir := range t.dirs {
		sort.Slice(t.dirs[dir], func(i, j int) bool { return t.dirs[dir][i].URI < t.dirs[dir][j].URI })
	}
	return t, nil
}

// addParents records uri as a child of its directory, and each directory up to the
// skill's own as a child of its parent.
func (t *tree) addParents(uri, top string) {
	for uri != top {
		dir := uri[:strings.LastIndexByte(uri, '/')]
		if !t.listed[uri] {
			t.listed[uri] = true
			t.dirs[dir] = append(t.dirs[dir], child{URI: uri, Dir: t.files[uri].URI == ""})
		}
		uri = dir
	}
	if _, ok := t.dirs[top]; !ok {
		t.dirs[top] = nil
	}
}

// readSkill reads the skill in root/rel: its SKILL.md frontmatter and every file below it.
func readSkill(root, rel string) (*skill, error) {
	sk := &skill{Path: rel, URI: "skill://" + rel + "/SKILL.md"}
	dir := filepath.Join(root, filepath.FromSlash(rel))
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != dir {
				if _, err := os.Stat(filepath.Join(p, "SKILL.md")); err == nil {
					return filepath.SkipDir // a nested skill is its own
				}
			}
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		r, _ := filepath.Rel(dir, p)
		uri := "skill://" + rel + "/" + filepath.ToSlash(r)
		mt := mime.TypeByExtension(path.Ext(p))
		if strings.HasSuffix(p, ".md") {
			mt = "text/markdown"
		}
		if mt == "" {
			mt = "text/plain"
		}
		sk.Files = append(sk.Files, file{URI: uri, Body: b, MimeType: mt})
		return nil
	})
	if err != nil {
		return nil, err
	}
	body, _ := os.ReadFile(filepath.Join(dir, "SKILL.md"))
	fm, err := frontmatter(body)
	if err != nil {
		return nil, fmt.Errorf("%s/SKILL.md: %w", rel, err)
	}
	sk.Frontmatter = fm
	return sk, nil
}

// frontmatter parses the YAML between the leading --- lines of a SKILL.md.
func frontmatter(b []byte) (map[string]any, error) {
	s := strings.TrimPrefix(string(b), "\ufeff")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	if !strings.HasPrefix(s, "---\n") {
		return nil, fmt.Errorf("no frontmatter")
	}
	end := strings.Index(s[4:], "\n---")
	if end < 0 {
		return nil, fmt.Errorf("frontmatter not closed")
	}
	var fm map[string]any
	if err := yaml.Unmarshal([]byte(s[4:4+end]), &fm); err != nil {
		return nil, err
	}
	return fm, nil
}

// generated is the i-th synthetic skill (-many): a SKILL.md alone.
func generated(i int) *skill {
	name := fmt.Sprintf("generated-%06d", i)
	desc := fmt.Sprintf("Generated skill %d", i)
	body := fmt.Sprintf("---\nname: %s\ndescription: %s\n---\n\nGenerated.\n", name, desc)
	fm := map[string]any{"name": name, "description": desc}
	uri := "skill://generated/" + name + "/SKILL.md"
	return &skill{Path: "generated/" + name, URI: uri, Frontmatter: fm,
		Files: []file{{URI: uri, Body: []byte(body), MimeType: "text/markdown"}}}
}

// digest is the SEP-2640 digest of bytes: sha256:<64 lowercase hex>.
func digest(b []byte) string {
	h := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(h[:])
}

// entry is the skill's skills/list entry; lie reports a digest of other bytes.
func (sk *skill) entry(lie bool) map[string]any {
	res := make([]map[string]any, 0, len(sk.Files))
	for _, f := range sk.Files {
		d := digest(f.Body)
		if lie {
			d = digest(append([]byte("not "), f.Body...))
		}
		res = append(res, map[string]any{"uri": f.URI, "digest": d, "size": len(f.Body)})
	}
	return map[string]any{"uri": sk.URI, "frontmatter": sk.Frontmatter, "resources": res}
}

// resource is the file as resources/list lists it (a SKILL.md named after its skill).
func (t *tree) resource(f file) map[string]any {
	r := map[string]any{"uri": f.URI, "name": path.Base(f.URI), "mimeType": f.MimeType}
	if sk := t.byURI[f.URI]; sk != nil {
		r["name"], r["description"] = sk.Frontmatter["name"], sk.Frontmatter["description"]
	}
	return r
}

// mustJSON marshals v, which is always JSON-able here.
func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
