package intake

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/auth"
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

type gate struct{ origin, cred bool }

func (g gate) CheckOrigin(w http.ResponseWriter, r *http.Request) bool {
	if !g.origin {
		w.WriteHeader(http.StatusForbidden)
	}
	return g.origin
}

func (g gate) Authenticate(w http.ResponseWriter, r *http.Request) (*auth.Identity, bool) {
	if !g.cred {
		w.WriteHeader(http.StatusUnauthorized)
		return nil, false
	}
	return &auth.Identity{Agent: "a"}, true
}

// TestAdmit: origin first, then the method, then the credential.
func TestAdmit(t *testing.T) {
	cases := []struct {
		g      gate
		method string
		status int
	}{
		{gate{true, true}, "GET", 0},
		{gate{false, true}, "GET", http.StatusForbidden},
		{gate{false, false}, "POST", http.StatusForbidden},
		{gate{true, true}, "POST", http.StatusMethodNotAllowed},
		{gate{true, false}, "POST", http.StatusMethodNotAllowed},
		{gate{true, false}, "GET", http.StatusUnauthorized},
	}
	for i, c := range cases {
		w := httptest.NewRecorder()
		id, ok := Admit(c.g, w, httptest.NewRequest(c.method, "/sse", nil), "GET")
		if c.status == 0 {
			if !ok || id == nil || id.Agent != "a" {
				t.Errorf("case %d: not admitted", i)
			}
			continue
		}
		if ok || w.Code != c.status {
			t.Errorf("case %d: ok %v status %d, want %d", i, ok, w.Code, c.status)
		}
		if c.status == http.StatusMethodNotAllowed && w.Header().Get("Allow") != "GET" {
			t.Errorf("case %d: Allow %q", i, w.Header().Get("Allow"))
		}
	}
}
