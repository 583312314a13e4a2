package front

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/auth"
)

func TestReadBody(t *testing.T) {
	read := func(body io.Reader, length int64, limit int64) (*httptest.ResponseRecorder, []byte, bool) {
		r := httptest.NewRequest("POST", "/mcp", body)
		r.ContentLength = length
		w := httptest.NewRecorder()
		b, ok := ReadBody(w, r, limit, 0)
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

// TestReadBodySlow: a body that does not arrive within the timeout is answered 408.
func TestReadBodySlow(t *testing.T) {
	got := make(chan int, 1)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, ok := ReadBody(w, r, 1<<20, 200*time.Millisecond)
		if ok {
			got <- 200
		} else {
			got <- 0
		}
	}))
	defer ts.Close()
	pr, pw := io.Pipe()
	defer pw.Close()
	req, _ := http.NewRequest("POST", ts.URL, pr)
	req.ContentLength = 100
	done := make(chan *http.Response, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			done <- resp
		} else {
			done <- nil
		}
	}()
	_, _ = pw.Write([]byte("partial"))
	select {
	case status := <-got:
		if status != 0 {
			t.Error("a body that stalled was read")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ReadBody did not give up on a stalled body")
	}
	pw.Close()
	select {
	case resp := <-done:
		if resp != nil {
			if resp.StatusCode != http.StatusRequestTimeout {
				t.Errorf("status %d, want 408", resp.StatusCode)
			}
			resp.Body.Close()
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no answer")
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
