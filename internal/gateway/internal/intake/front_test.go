package intake

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestReadBody(t *testing.T) {
	read := func(body io.Reader, length int64, limit int64) (*httptest.ResponseRecorder, []byte, bool) {
		r := httptest.NewRequest("POST", "/mcp", body)
		r.ContentLength = length
		w := httptest.NewRecorder()
		b, ok := ReadBody(w, r, limit)
		return w, b, ok
	}
	if _, b, ok := read(strings.NewReader("hello"), 5, 100); !ok || string(b) != "hello" {
		t.Errorf("a small body: %q %v", b, ok)
	}
	if w, _, ok := read(strings.NewReader("hello"), 5, 4); ok || w.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("a declared length over the limit: %d", w.Code)
	}
	if w, _, ok := read(strings.NewReader(strings.Repeat("x", 200)), -1, 100); ok || w.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("a chunked body over the limit: %d", w.Code)
	}
	if _, b, ok := read(strings.NewReader(strings.Repeat("x", 100)), -1, 100); !ok || len(b) != 100 {
		t.Errorf("a chunked body at the limit: %d %v", len(b), ok)
	}
	if w, _, ok := read(strings.NewReader("short"), 10, 100); ok || w.Code != http.StatusBadRequest {
		t.Errorf("a body shorter than declared: %d", w.Code)
	}
	big := strings.Repeat("y", presizeBody+10)
	if _, b, ok := read(strings.NewReader(big), int64(len(big)), 1<<20); !ok || len(b) != len(big) {
		t.Errorf("a body above the presize: %d %v", len(b), ok)
	}
	if w, _, ok := read(strings.NewReader(big[:presizeBody+1]), int64(len(big)), 1<<20); ok || w.Code != http.StatusBadRequest {
		t.Errorf("a large body shorter than declared: %d", w.Code)
	}
}
