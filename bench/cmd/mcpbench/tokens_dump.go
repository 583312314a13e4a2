package main

// T1's catalogue files: with -t1-dump DIR, each catalogue's full tool list as its gateway
// served it is written to DIR/<catalogue>.json.gz, in the form the search ranker's offline
// replay reads (internal/registry/internal/toolsearch/testdata/catalogues): the name,
// description, each parameter's description and the read-only hint of every tool, sorted
// by name. With -t1-catalogues a run keeps only the catalogues named.

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// dumpParam is one parameter of a dumped tool: its description, if it has one.
type dumpParam struct {
	Name        string
	Description string
}

// dumpParams are a tool's parameters in the order its schema lists them.
type dumpParams []dumpParam

// UnmarshalJSON reads a schema's properties object, keeping their order.
func (p *dumpParams) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return fmt.Errorf("properties: not an object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		var v struct {
			Description string `json:"description"`
		}
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("property %v: %w", tok, err)
		}
		*p = append(*p, dumpParam{Name: fmt.Sprint(tok), Description: v.Description})
	}
	return nil
}

// MarshalJSON writes the parameters as an object in their order, a description only
// where there is one.
func (p dumpParams) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, q := range p {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(q.Name)
		b.Write(name)
		b.WriteByte(':')
		if q.Description == "" {
			b.WriteString("{}")
			continue
		}
		desc, _ := json.Marshal(q.Description)
		fmt.Fprintf(&b, `{"description":%s}`, desc)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// dumpTool is what the catalogue file keeps of a tool definition.
type dumpTool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	InputSchema struct {
		Properties dumpParams `json:"properties"`
	} `json:"inputSchema"`
	Annotations *dumpAnnotations `json:"annotations,omitempty"`
}

// dumpAnnotations keep the read-only hint, written only when it is true.
type dumpAnnotations struct {
	ReadOnly bool `json:"readOnlyHint"`
}

// dumpTools is the catalogue file's JSON for a full list's pages: every tool, by name.
func dumpTools(pages []json.RawMessage) ([]byte, error) {
	var tools []dumpTool
	for i, pg := range pages {
		var p struct {
			Tools []dumpTool `json:"tools"`
		}
		if err := json.Unmarshal(pg, &p); err != nil {
			return nil, fmt.Errorf("tools/list page %d: %w", i+1, err)
		}
		tools = append(tools, p.Tools...)
	}
	for i := range tools {
		if tools[i].Annotations != nil && !tools[i].Annotations.ReadOnly {
			tools[i].Annotations = nil
		}
		if tools[i].InputSchema.Properties == nil {
			tools[i].InputSchema.Properties = dumpParams{}
		}
	}
	slices.SortFunc(tools, func(a, b dumpTool) int { return strings.Compare(a.Name, b.Name) })
	return json.MarshalIndent(tools, "", "")
}

// dumpCatalogue lists gw's tools in a full session and writes them to
// e.t1Dump/<name>.json.gz.
func (e *env) dumpCatalogue(ctx context.Context, gw *target, name string) error {
	t := newTarget(gw.Name+" dump", gw.URL, "", 1)
	t.Header = map[string]string{"X-Mcp-Handshake": formFull}
	s, err := t.open(ctx)
	if err != nil {
		return err
	}
	defer s.close()
	var id int64
	l, err := s.listAll(ctx, &id)
	if err != nil {
		return err
	}
	body, err := dumpTools(l.Pages)
	if err != nil {
		return err
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if _, err := zw.Write(body); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := os.MkdirAll(e.t1Dump, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(e.t1Dump, name+".json.gz"), gz.Bytes(), 0o644)
}

// catalogueNames are the names of a -t1-catalogues list (none when it is empty).
func catalogueNames(list string) []string {
	var out []string
	for n := range strings.SplitSeq(list, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// pickCatalogues keeps the catalogues of cats named in only, in cats' order (all of them
// when only is empty); a name not among cats is an error.
func pickCatalogues(cats []tokenCatalogue, only []string) ([]tokenCatalogue, error) {
	if len(only) == 0 {
		return cats, nil
	}
	var out []tokenCatalogue
	for _, c := range cats {
		if slices.Contains(only, c.Name) {
			out = append(out, c)
		}
	}
	for _, n := range only {
		if !slices.ContainsFunc(out, func(c tokenCatalogue) bool { return c.Name == n }) {
			return nil, fmt.Errorf("-t1-catalogues: no catalogue %q in this run", n)
		}
	}
	return out, nil
}
