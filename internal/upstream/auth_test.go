package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/wire"
)

// tokenServer is a streamable HTTP upstream that serves only requests carrying one of its
// valid tokens, and challenges the rest.
type tokenServer struct {
	mu    sync.Mutex
	valid map[string]bool
	seen  []string // the Authorization of every request
}

func (s *tokenServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.seen = append(s.seen, r.Header.Get("Authorization"))
	ok := s.valid[r.Header.Get("Authorization")]
	s.mu.Unlock()
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", resource_metadata="http://x/prm"`)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var m wire.Msg
	_ = json.Unmarshal(body, &m)
	if m.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	result := `{}`
	if m.Method == "initialize" {
		result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"t","version":"1"}}`
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":`+result+`}`)
}

// authz is an Authorizer that hands out one header and, when refused, another.
type authz struct {
	mu      sync.Mutex
	header  string
	next    string // what Refused switches to ("": refuse for good)
	refusal error
	calls   []string // "refused <sent> <status> <challenge>"
}

func (a *authz) Header(context.Context) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.header, nil
}

func (a *authz) Refused(_ context.Context, sent string, status int, ch http.Header) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls = append(a.calls, "refused "+sent+" "+http.StatusText(status)+" "+ch.Get("Www-Authenticate"))
	if a.next == "" {
		return a.refusal
	}
	a.header, a.next = a.next, ""
	return nil
}

func dialAuth(t *testing.T, url string, a Authorizer) (*Conn, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return NewDialer().Dial(ctx, Options{Name: "t", Transport: "streamable_http", URL: url, ProtocolVersion: SessionVersion,
		ConnectTimeout: 5 * time.Second, Authorizer: a, Log: slog.New(slog.DiscardHandler)})
}

// TestAuthorizer: requests carry the authorizer's header; a refused one is sent once more
// with the header the authorizer gives after hearing of the refusal (and its challenge);
// a refusal the authorizer cannot mend, or no grant at all, fails with its error.
func TestAuthorizer(t *testing.T) {
	s := &tokenServer{valid: map[string]bool{"Bearer good": true, "Bearer renewed": true}}
	ts := httptest.NewServer(s)
	defer ts.Close()

	a := &authz{header: "Bearer good"}
	c, err := dialAuth(t, ts.URL, a)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Request(ctx, "ping", nil); err != nil {
		t.Fatalf("ping with a good token: %v", err)
	}
	// The token goes stale upstream; the authorizer renews it when told.
	s.mu.Lock()
	delete(s.valid, "Bearer good")
	s.mu.Unlock()
	a.mu.Lock()
	a.next = "Bearer renewed"
	a.mu.Unlock()
	if _, err := c.Request(ctx, "ping", nil); err != nil {
		t.Fatalf("ping after renewal: %v", err)
	}
	a.mu.Lock()
	calls := strings.Join(a.calls, "|")
	a.mu.Unlock()
	if !strings.Contains(calls, `refused Bearer good Unauthorized Bearer error="invalid_token"`) {
		t.Errorf("refusals told: %q", calls)
	}
	// Refused for good: the call fails with the authorizer's word.
	s.mu.Lock()
	delete(s.valid, "Bearer renewed")
	s.mu.Unlock()
	a.mu.Lock()
	a.refusal = errors.New("upstream t needs your authorization: open http://consent/2")
	a.mu.Unlock()
	if _, err := c.Request(ctx, "ping", nil); err == nil || !strings.Contains(err.Error(), "http://consent/2") {
		t.Errorf("a refusal that cannot be mended: %v", err)
	}
	c.Close()

	// No grant at all (on a server of its own, so that the first connection's last
	// requests cannot mix in): the first request goes without a token, the upstream's
	// refusal is told to the authorizer, and the start fails with what it says to do.
	s.mu.Lock()
	for _, h := range s.seen {
		if h == "" {
			t.Error("a request went without the Authorization header while there was a grant")
		}
	}
	s.mu.Unlock()
	s2 := &tokenServer{valid: map[string]bool{}}
	ts2 := httptest.NewServer(s2)
	defer ts2.Close()
	none := &authz{refusal: errors.New("upstream t needs your authorization: open http://consent")}
	if _, err := dialAuth(t, ts2.URL, none); err == nil || !strings.Contains(err.Error(), "http://consent") {
		t.Errorf("dial without a grant: %v", err)
	}
	s2.mu.Lock()
	defer s2.mu.Unlock()
	if len(s2.seen) != 1 || s2.seen[0] != "" {
		t.Errorf("requests without a grant: %q, want one without a token", s2.seen)
	}
	none.mu.Lock()
	defer none.mu.Unlock()
	if len(none.calls) != 1 || !strings.Contains(none.calls[0], "refused  Unauthorized Bearer") {
		t.Errorf("refusals told: %q", none.calls)
	}
}
