package upstream

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/httpclient"
	"github.com/mcpgw/mcpgw/internal/httpclient/httpclienttest"
)

// A connection that die or interrupt takes away while its answer is being read must not
// go back to the pool: it is closed (or about to be), and the next request on it would
// fail with "use of closed network connection". Its answer, already buffered, still
// counts.
func TestH1TakenConnNotPooled(t *testing.T) {
	for _, how := range []string{"die", "interrupt", "die, no deadline", "interrupt, no deadline"} {
		t.Run(how, func(t *testing.T) {
			deadline := deadlineIn(t)
			if strings.HasSuffix(how, "no deadline") { // a notification's POST
				deadline = time.Time{}
			}
			cs := httpclienttest.NewCountedServer(t, false, func(_ *httpclienttest.CountedServer, w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
			})
			tr := newStreamable("up", cs.URL+"/mcp", nil, newUpstreamHTTPClient(nil), slog.New(slog.DiscardHandler))
			pool := &httpclient.Pool{}
			tr.h1.Pool = pool
			if err := tr.start(func([]byte, *Call) {}); err != nil {
				t.Fatal(err)
			}
			k := newCall(nil, 1, "tools/call")
			req := httpclient.Request{Method: http.MethodPost, Body: []byte(`{}`), Deadline: deadline, Owner: k}
			postHeader(&req.Header, k, "", "", req.Body)
			r, err := tr.ep.RoundTrip(context.Background(), tr, &req)
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(how, "die") {
				tr.die(ErrClosed)
			} else {
				tr.interrupt(k)
			}
			body, err := r.ReadBody(1 << 20)
			if err != nil {
				t.Logf("readBody after %s: %v (the answer was not buffered yet)", how, err)
			} else if string(body) != `{"jsonrpc":"2.0","id":1,"result":{}}` {
				t.Errorf("body %q", body)
			}
			if n := pool.IdleCount(); n != 0 {
				t.Fatalf("after %s the taken connection went back to the pool (%d idle)", how, n)
			}
		})
	}
}

func deadlineIn(t *testing.T) time.Time {
	t.Helper()
	return time.Now().Add(5 * time.Second)
}
