package upstream

import (
	"strings"
	"testing"
	"time"
)

// TestParamHeadersDeepSchema: reading the x-mcp-header annotations of a schema whose
// properties nest thousands of levels deep over a large leaf is bounded (each level used to
// decode the whole of what is below it again: seconds per tool), and an annotation deeper
// than the levels read makes the tool invalid rather than unread.
func TestParamHeadersDeepSchema(t *testing.T) {
	const levels = 4000
	leaf := `{"type":"string","description":"` + strings.Repeat("x", 1<<20) + `"}`
	deep := strings.Repeat(`{"type":"object","properties":{"a":`, levels) + leaf + strings.Repeat(`}}`, levels)
	def := `{"name":"deep","inputSchema":{"type":"object","properties":{"h":{"type":"string","x-mcp-header":"H"},"d":` + deep + `}}}`
	start := time.Now()
	name, bindings, err := toolParamHeaders([]byte(def))
	took := time.Since(start)
	if took > 10*time.Second { // unbounded, it took minutes
		t.Errorf("reading the annotations took %v", took)
	}
	if name != "deep" || err != nil || len(bindings) != 1 || bindings[0].header != "H" {
		t.Errorf("got %q %v %v", name, bindings, err)
	}
	hidden := strings.Replace(def, `"type":"string","description"`, `"type":"string","x-mcp-header":"Deep","description"`, 1)
	if _, _, err := toolParamHeaders([]byte(hidden)); err == nil || !strings.Contains(err.Error(), "levels of properties deep") {
		t.Errorf("an annotation %d levels deep: %v, want the tool refused", levels, err)
	}
}
