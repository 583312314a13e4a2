package catalog

import (
	"encoding/json"
	"fmt"
	"testing"
)

// TestCountTokensPinned pins the o200k_base count of known strings, so a change of the
// embedded vocabulary (or of the library's pre-tokenizer) is noticed. The figures were
// checked against an independent implementation of the same vocabulary (the npm
// js-tiktoken package's o200k_base): 2, 25 and 55; its cl100k_base gives 2, 24 and 58.
func TestCountTokensPinned(t *testing.T) {
	for _, c := range []struct {
		text string
		want int
	}{
		{"hello world", 2},
		{`{"tools":[{"name":"read_file","description":"Read the complete contents of a file from the file system."}]}`, 25},
		{`{"name":"fs__read_file","description":"Read a file’s contents — UTF-8, up to 10485760 bytes. Ünïcode: 日本語のテキスト","inputSchema":{"type":"object","properties":{"path":{"type":"string"}}}}`, 55},
	} {
		if got := CountTokens([]byte(c.text)); got != c.want {
			t.Errorf("CountTokens(%.40q…) = %d, want %d (%s)", c.text, got, c.want, TokenizerName)
		}
	}
}

// TestListPageCountedOnce: a page's tokens are counted when it is built and travel with
// it in the view's page cache: asking again returns the same cached page (not a recount),
// and its count is the page's own, in both forms (each its own cache entry).
func TestListPageCountedOnce(t *testing.T) {
	r := newTestViews(t, map[string]*Catalog{"a": testCatalog(t, "a", names("t", 9), nil, nil, nil)}, "a")
	v := r.ViewFor([]string{"a"}, nil, nil, nil)
	for _, thin := range []bool{false, true} {
		first, ok := v.ListPageCounted("tools", thin, "", 4)
		if !ok {
			t.Fatal("first page refused")
		}
		if want := CountTokens(first.Bytes); first.Tokens != want || want == 0 {
			t.Errorf("thin=%v: page carries %d tokens, its bytes count %d", thin, first.Tokens, want)
		}
		again, _ := v.ListPageCounted("tools", thin, "", 4)
		if again != first {
			t.Errorf("thin=%v: a second request built and counted the page again", thin)
		}
		cached, _ := v.pages.Load("thin:tools\x004\x00")
		if !thin {
			cached, _ = v.pages.Load("tools\x004\x00")
		}
		if cached != first {
			t.Errorf("thin=%v: the cache holds %v, not the counted page", thin, cached)
		}
	}
}

// TestListPageHitDoesNotTokenize: serving a cached page does not run the tokenizer.
// Counting a page allocates (the pre-tokenizer's regexp); a cache hit allocates only its
// cache key. The bound is checked against the tokenizer's own cost, so a hit that
// recounted would fail it.
func TestListPageHitDoesNotTokenize(t *testing.T) {
	r := newTestViews(t, map[string]*Catalog{"a": testCatalog(t, "a", names("t", 40), nil, nil, nil)}, "a")
	v := r.ViewFor([]string{"a"}, nil, nil, nil)
	p, _ := v.ListPageCounted("tools", false, "", 0)
	hit := testing.AllocsPerRun(50, func() { _, _ = v.ListPageCounted("tools", false, "", 0) })
	count := testing.AllocsPerRun(5, func() { _ = CountTokens(p.Bytes) })
	if hit > 3 || count <= hit {
		t.Errorf("a cache hit allocates %v, counting the page %v: a hit must not tokenize", hit, count)
	}
}

// benchView is a view over n tools with a few hundred bytes of definition each.
func benchView(b *testing.B, n int) *View {
	v := &View{}
	for i := range n {
		def := fmt.Sprintf(`{"name":"tool%03d","description":"Reads the file at the given path and returns its contents as text, up to the configured limit.","inputSchema":{"type":"object","properties":{"path":{"type":"string","description":"absolute path"}},"required":["path"]}}`, i)
		t, err := ExposeTool("fs", json.RawMessage(def), testNaming)
		if err != nil {
			b.Fatal(err)
		}
		v.Tools = append(v.Tools, t)
	}
	return v
}

// BenchmarkListPageHit is the list path: a cached page, with its count, from the view.
func BenchmarkListPageHit(b *testing.B) {
	v := benchView(b, 50)
	v.ListPageCounted("tools", false, "", 0)
	b.ReportAllocs()
	for b.Loop() {
		v.ListPageCounted("tools", false, "", 0)
	}
}

// BenchmarkCountTokens is what building (and counting) a page of 50 tools adds, once.
func BenchmarkCountTokens(b *testing.B) {
	v := benchView(b, 50)
	p, _ := v.ListPageCounted("tools", false, "", 0)
	b.SetBytes(int64(len(p.Bytes)))
	b.ReportAllocs()
	for b.Loop() {
		CountTokens(p.Bytes)
	}
}
