package upstream

import (
	"context"
	"net/http"
	"testing"

	"github.com/mcpgw/mcpgw/internal/httpclient"
	"github.com/mcpgw/mcpgw/internal/httpclient/httpclienttest"
)

// The HTTP peers and helpers of the tests that send POSTs through internal/httpclient as the
// streamable HTTP transport does (busy polling, TLS settings, the hand-off of taken
// connections). The loopback peers themselves are internal/httpclient/httpclienttest's, which internal/httpclient's
// own tests use as well.

// testTracker holds every connection and never abandons a request.
type testTracker struct{}

func (*testTracker) Track(*httpclient.Conn, any, bool) bool { return true }
func (*testTracker) Abandoned(any) bool                     { return false }

// newTestEndpoint is an endpoint for rawURL with a pool of its own, emptied when the test
// ends, never through a proxy.
func newTestEndpoint(t *testing.T, rawURL string, o httpclient.Options) *httpclient.Endpoint {
	t.Helper()
	if o.Pool == nil {
		o.Pool = &httpclient.Pool{}
	}
	o.Proxy = httpclienttest.NoProxy
	ep, err := httpclient.NewEndpoint(rawURL, nil, o)
	if err != nil {
		t.Fatalf("httpclient.NewEndpoint(%q): %v", rawURL, err)
	}
	t.Cleanup(o.Pool.CloseIdle)
	return ep
}

// doPost sends body as the transport sends a message without a session: bounded by ctx's
// deadline.
func doPost(ctx context.Context, ep *httpclient.Endpoint, tr httpclient.Tracker, body []byte) (*httpclient.Response, error) {
	deadline, _ := ctx.Deadline()
	req := httpclient.Request{Method: http.MethodPost, Body: body, Deadline: deadline}
	postHeader(&req.Header, nil, "", "", body)
	r, err := ep.RoundTrip(ctx, tr, &req)
	if err != nil {
		return nil, err
	}
	return &r, nil
}

const okJSON = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"ok\":true}"

func mustPost(t *testing.T, ep *httpclient.Endpoint, tr httpclient.Tracker, body string) *httpclient.Response {
	t.Helper()
	r, err := doPost(httpclienttest.Ctx(t), ep, tr, []byte(body))
	if err != nil {
		t.Fatalf("post: %v", err)
	}
	return r
}

func mustReadBody(t *testing.T, r *httpclient.Response, want string) {
	t.Helper()
	got, err := r.ReadBody(1 << 20)
	if err != nil {
		t.Fatalf("ReadBody: %v", err)
	}
	if string(got) != want {
		t.Fatalf("body = %q, want %q", got, want)
	}
}
