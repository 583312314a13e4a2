package upstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/wire"
)

// legacyServer is a legacy HTTP+SSE upstream: GET /sse sends the endpoint event and then
// whatever is put on events; POST /message records the Authorization header it got.
type legacyServer struct {
	*httptest.Server
	endpoint string      // the endpoint event's data; "{self}" is the server's own URL
	events   chan string // more raw events for the stream

	mu    sync.Mutex
	auths []string // Authorization of each POST /message
}

func newLegacyServer(t *testing.T, endpoint string) *legacyServer {
	ls := &legacyServer{endpoint: endpoint, events: make(chan string, 8)}
	ls.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/sse":
			w.Header().Set("Content-Type", "text/event-stream")
			data := strings.ReplaceAll(ls.endpoint, "{self}", ls.URL)
			fmt.Fprintf(w, "event: endpoint\n")
			for _, l := range strings.Split(data, "\n") {
				fmt.Fprintf(w, "data: %s\n", l)
			}
			fmt.Fprintf(w, "\n")
			w.(http.Flusher).Flush()
			for {
				select {
				case ev := <-ls.events:
					io.WriteString(w, ev)
					w.(http.Flusher).Flush()
				case <-r.Context().Done():
					return
				}
			}
		case r.Method == http.MethodPost && r.URL.Path == "/message":
			ls.mu.Lock()
			ls.auths = append(ls.auths, r.Header.Get("Authorization"))
			ls.mu.Unlock()
			w.WriteHeader(http.StatusAccepted)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(ls.Close)
	return ls
}

func (ls *legacyServer) posts() []string {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return append([]string(nil), ls.auths...)
}

// otherServer counts every request it gets: it stands for a host the endpoint event must
// not be able to send the gateway's credentials to.
func otherServer(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(s.Close)
	return s, &n
}

var testAuth = map[string]string{"Authorization": "Bearer upstream-secret"}

func discardLog() *slog.Logger { return slog.New(slog.DiscardHandler) }

// TestSSEEndpointMustBeSameOrigin: the legacy transport POSTs every message, with the
// configured headers, to the URL the endpoint event names. An endpoint on another origin
// would get the upstream's credentials: the transport refuses to start, naming the server.
func TestSSEEndpointMustBeSameOrigin(t *testing.T) {
	other, hits := otherServer(t)
	otherURL, _ := url.Parse(other.URL)
	for name, endpoint := range map[string]string{
		"other port":              other.URL + "/message",
		"scheme-relative":         "//" + otherURL.Host + "/message",
		"other host, same port":   "{self}/message", // rewritten below to localhost
		"other scheme":            "{self}/message", // rewritten below to https
		"other scheme, same host": "ftp://{host}/message",
		"userinfo trick":          "{self}@" + otherURL.Host + "/message",
	} {
		t.Run(name, func(t *testing.T) {
			ls := newLegacyServer(t, endpoint)
			self, _ := url.Parse(ls.URL)
			switch name {
			case "other host, same port":
				ls.endpoint = "http://localhost:" + self.Port() + "/message"
			case "other scheme":
				ls.endpoint = "https://" + self.Host + "/message"
			case "other scheme, same host":
				ls.endpoint = strings.ReplaceAll(endpoint, "{host}", self.Host)
			case "userinfo trick":
				ls.endpoint = "http://" + self.Host + "@" + otherURL.Host + "/message"
			}
			tr := newSSE("legacy-up", ls.URL+"/sse", testAuth, newUpstreamHTTPClient(nil), discardLog())
			err := tr.start(func([]byte, *Call) {})
			if err == nil {
				_ = tr.send(context.Background(), []byte(`{"jsonrpc":"2.0","method":"x"}`), nil)
				tr.close()
				t.Fatalf("endpoint %q accepted for SSE URL %s (other server got %d requests)", ls.endpoint, ls.URL, hits.Load())
			}
			if !strings.Contains(err.Error(), "legacy-up") || !strings.Contains(err.Error(), "origin") {
				t.Fatalf("error %q does not name the server and the reason", err)
			}
			select {
			case <-tr.done():
			case <-time.After(5 * time.Second):
				t.Fatal("the transport did not end")
			}
			if n := hits.Load(); n != 0 {
				t.Fatalf("the other server got %d requests", n)
			}
		})
	}
}

// TestSSEEndpointControlCharacters: an endpoint with control characters (a line break
// from a second data line among them) is refused.
func TestSSEEndpointControlCharacters(t *testing.T) {
	for _, endpoint := range []string{
		"/message\nhttp://elsewhere/",
		"/mess\x01age",
		"/message\t",
		"/message\x7f",
		"/message?x=1\x00",
		" \x1b[31m",
	} {
		ls := newLegacyServer(t, endpoint)
		tr := newSSE("legacy-up", ls.URL+"/sse", testAuth, newUpstreamHTTPClient(nil), discardLog())
		err := tr.start(func([]byte, *Call) {})
		if err == nil {
			tr.close()
			t.Fatalf("endpoint %q accepted", endpoint)
		}
		if !strings.Contains(err.Error(), "legacy-up") || !strings.Contains(err.Error(), "refused") {
			t.Fatalf("endpoint %q: error %q does not name the server and say it was refused", endpoint, err)
		}
	}
}

// TestSSEEndpointSameOriginWorks: relative and absolute endpoints on the SSE URL's origin
// are used, with the configured headers.
func TestSSEEndpointSameOriginWorks(t *testing.T) {
	for _, endpoint := range []string{
		"/message?sessionId=1",
		"message?sessionId=1", // relative to /sse
		" /message?sessionId=1 ",
		"{self}/message?sessionId=1",
	} {
		ls := newLegacyServer(t, endpoint)
		tr := newSSE("legacy-up", ls.URL+"/sse", testAuth, newUpstreamHTTPClient(nil), discardLog())
		if err := tr.start(func([]byte, *Call) {}); err != nil {
			t.Fatalf("endpoint %q: %v", endpoint, err)
		}
		if err := tr.send(context.Background(), []byte(`{"jsonrpc":"2.0","method":"x"}`), nil); err != nil {
			t.Fatalf("endpoint %q: send: %v", endpoint, err)
		}
		tr.close()
		if got := ls.posts(); len(got) != 1 || got[0] != testAuth["Authorization"] {
			t.Fatalf("endpoint %q: POSTs with Authorization %q", endpoint, got)
		}
	}
}

// TestSSEEndpointLaterEventRefused: an endpoint event after the first that names another
// origin changes nothing: messages keep going to the first endpoint.
func TestSSEEndpointLaterEventRefused(t *testing.T) {
	other, hits := otherServer(t)
	ls := newLegacyServer(t, "/message")
	delivered := make(chan string, 4)
	tr := newSSE("legacy-up", ls.URL+"/sse", testAuth, newUpstreamHTTPClient(nil), discardLog())
	if err := tr.start(func(b []byte, _ *Call) { delivered <- string(b) }); err != nil {
		t.Fatal(err)
	}
	defer tr.close()
	ls.events <- "event: endpoint\ndata: " + other.URL + "/message\n\n" + `data: {"jsonrpc":"2.0","method":"marker"}` + "\n\n"
	select {
	case <-delivered: // the endpoint event before it has been handled
	case <-time.After(5 * time.Second):
		t.Fatal("the message after the second endpoint event was not delivered")
	}
	if err := tr.send(context.Background(), []byte(`{"jsonrpc":"2.0","method":"x"}`), nil); err != nil {
		t.Fatal(err)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the other server got %d requests", n)
	}
	if got := ls.posts(); len(got) != 1 {
		t.Fatalf("the upstream got %d POSTs, want 1", len(got))
	}
}

func TestSameOrigin(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		same bool
	}{
		{"http://a.example/sse", "http://a.example/message", true},
		{"http://a.example/sse", "http://a.example:80/message", true},
		{"https://a.example:443/sse", "https://a.example/message", true},
		{"http://A.Example/sse", "http://a.example/message", true},
		{"http://[::1]:8080/sse", "http://[::1]:8080/m", true},
		{"http://a.example/sse", "https://a.example/message", false},
		{"http://a.example/sse", "http://a.example:8080/message", false},
		{"http://a.example/sse", "http://b.example/message", false},
		{"http://a.example/sse", "http://a.example.evil/message", false},
		{"http://[::1]:8080/sse", "http://[::2]:8080/m", false},
	} {
		a, _ := url.Parse(tt.a)
		b, _ := url.Parse(tt.b)
		if got := sameOrigin(a, b); got != tt.same {
			t.Errorf("sameOrigin(%s, %s) = %v, want %v", tt.a, tt.b, got, tt.same)
		}
	}
}

// bigEvent is 20,000 data lines of 900 bytes: one 18 MB event.
func bigEvent() string {
	return strings.Repeat("data: "+strings.Repeat("x", 900)+"\n", 20000) + "\n"
}

// TestStreamableEventLimit: the streamable transport reads events bounded by its message
// limit as a whole; a larger event ends the stream and nothing of it is delivered.
func TestStreamableEventLimit(t *testing.T) {
	tr := newStreamable("up", "http://127.0.0.1:1/mcp", nil, newUpstreamHTTPClient(nil), discardLog())
	tr.maxMessage = 1 << 20
	var got [][]byte
	tr.deliver = func(b []byte, _ *Call) { got = append(got, b) }
	body := `data: {"jsonrpc":"2.0","method":"first"}` + "\n\n" + bigEvent() + `data: {"jsonrpc":"2.0","method":"after"}` + "\n\n"
	tr.relayEvents(io.NopCloser(strings.NewReader(body)), nil)
	if len(got) != 1 || !strings.Contains(string(got[0]), "first") {
		var sizes []int
		for _, b := range got {
			sizes = append(sizes, len(b))
		}
		t.Fatalf("delivered messages of sizes %v; want only the first", sizes)
	}
}

// TestSSEEventLimit: the legacy transport ends its stream on an event over its limit,
// saying so.
func TestSSEEventLimit(t *testing.T) {
	ls := newLegacyServer(t, "/message")
	tr := newSSE("legacy-up", ls.URL+"/sse", nil, newUpstreamHTTPClient(nil), discardLog())
	tr.maxMessage = 1 << 20
	var n atomic.Int32
	if err := tr.start(func([]byte, *Call) { n.Add(1) }); err != nil {
		t.Fatal(err)
	}
	defer tr.close()
	ls.events <- bigEvent()
	select {
	case <-tr.done():
	case <-time.After(10 * time.Second):
		t.Fatal("the transport did not end on an oversized event")
	}
	if err := tr.err(); err == nil || !errors.Is(err, wire.ErrEventTooLarge) && !strings.Contains(err.Error(), "size limit") {
		t.Fatalf("transport error %v, want one saying the event is over the limit", err)
	}
	if n.Load() != 0 {
		t.Fatalf("%d messages delivered", n.Load())
	}
}
