package dispatch

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/store"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// fakeHost stands in for the gateway; it answers initialize with a marker.
type fakeHost struct{}

func (fakeHost) Policy() *config.Config       { return &config.Config{} }
func (fakeHost) Live(string) *session.Session { return nil }
func (fakeHost) Sessions() []*session.Session { return nil }
func (fakeHost) Refusal(*session.Session, string) (string, string) {
	return "unknown_tool", "unknown tool"
}
func (fakeHost) InitializeResult(string, []string) json.RawMessage {
	return json.RawMessage(`{"marker":1}`)
}

// noSessionHost is the session's side of the fake: nothing a method-table test reaches.
type noSessionHost struct{}

func (noSessionHost) Instances() *registry.Instances       { return nil }
func (noSessionHost) Save(*store.Record) error             { return nil }
func (noSessionHost) Filter(*session.Session) *auth.Filter { return nil }
func (noSessionHost) Gen() uint64                          { return 0 }
func (noSessionHost) ListChanged()                         {}
func (noSessionHost) Live(string) *session.Session         { return nil }
func (noSessionHost) Closing(*session.Session)             {}
func (noSessionHost) InstanceStarted(string)               {}
func (noSessionHost) Context() context.Context             { return context.Background() }
func (noSessionHost) Relay() session.Relay                 { return nil }
func (noSessionHost) BuildView(*session.Session, *auth.Filter, map[string]bool, map[string]*registry.Catalog) *registry.View {
	return nil
}

// collect is an Outbox that keeps what it is given.
type collect struct{ related, replies [][]byte }

func (c *collect) Related(msg []byte) error { c.related = append(c.related, msg); return nil }
func (c *collect) Reply(msg []byte) error   { c.replies = append(c.replies, msg); return nil }

func newTestDispatcher() *Dispatcher {
	return New(Parts{Cfg: &config.Config{}, Ctx: context.Background(), Host: fakeHost{}}, "__")
}

// The method table answers what needs no upstream, and refuses what it cannot route with
// the error the protocol names, on the request's id.
func TestDispatchMethodTable(t *testing.T) {
	dp := newTestDispatcher()
	s := session.New(noSessionHost{}, store.Record{ID: "s1"})
	for _, tc := range []struct{ msg, want string }{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `"result":{}`},
		{`{"jsonrpc":"2.0","id":"a","method":"initialize","params":{}}`, `"result":{"marker":1}`},
		{`{"jsonrpc":"2.0","id":2,"method":"no/such"}`, `"code":-32601`},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{}}`, `"code":-32602`},
		{`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"x","name":"y"}}`, `"code":-32602`},
		{`{"jsonrpc":"2.0","id":5,"method":"logging/setLevel","params":{"level":"loud"}}`, `"code":-32602`},
	} {
		var m wire.Msg
		if err := wire.ParseInto([]byte(tc.msg), &m); err != nil {
			t.Fatalf("%s: %v", tc.msg, err)
		}
		out := &collect{}
		dp.Dispatch(context.Background(), s, &m, out)
		if len(out.replies) != 1 {
			t.Fatalf("%s: %d replies, want 1", tc.msg, len(out.replies))
		}
		got := string(out.replies[0])
		if !strings.Contains(got, tc.want) || !strings.Contains(got, `"id":`+string(m.ID)) {
			t.Errorf("%s: answered %s, want %s on its id", tc.msg, got, tc.want)
		}
	}
	if s.Used.Load() != true {
		t.Error("a request after initialize did not mark the session used")
	}
}

// A progress token is replaced by a gateway token (so sessions cannot name each other's),
// the other members keep their order, and a _meta that is not one object is refused.
func TestRewriteMeta(t *testing.T) {
	dp := newTestDispatcher()
	out, tok, err := dp.rewriteMeta(json.RawMessage(`{"a":1,"progressToken":"mine","b":[2]}`))
	if err != nil {
		t.Fatal(err)
	}
	if string(tok.client) != `"mine"` || tok.gw == "" || tok.gw == "mine" {
		t.Fatalf("token: client %s, gateway %q", tok.client, tok.gw)
	}
	if want := `{"a":1,"progressToken":"` + tok.gw + `","b":[2]}`; string(out) != want {
		t.Fatalf("rewritten _meta %s, want %s", out, want)
	}
	for _, bad := range []string{`[1]`, `{"progressToken":1,"progressToken":2}`, `"x"`} {
		if _, _, err := dp.rewriteMeta(json.RawMessage(bad)); err == nil {
			t.Errorf("_meta %s accepted", bad)
		}
	}
	if out, tok, err := dp.rewriteMeta(nil); out != nil || tok.gw != "" || err != nil {
		t.Errorf("no _meta: %s %q %v", out, tok.gw, err)
	}
}

func TestIsErrorResult(t *testing.T) {
	for res, want := range map[string]bool{
		`{"content":[],"isError":true}`:                true,
		`{"content":[],"isError":false}`:               false,
		`{"content":[{"text":"\"isError\":true"}]}`:    false,
		`{"structuredContent":{"isError":true},"x":1}`: false,
	} {
		if got := isErrorResult(json.RawMessage(res)); got != want {
			t.Errorf("isErrorResult(%s) = %v, want %v", res, got, want)
		}
	}
}
