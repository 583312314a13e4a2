package dispatch

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/telemetry"
	"github.com/mcpgw/mcpgw/internal/upstream"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/store"
	"github.com/mcpgw/mcpgw/internal/wire"
)

func TestTaskSupportReadsTheDefinition(t *testing.T) {
	for def, want := range map[string]string{
		`{"name":"a","execution":{"taskSupport":"optional"}}`: "optional",
		`{"name":"a","execution":{"taskSupport":"required"}}`: "required",
		`{"name":"a"}`: "",
		`{"name":"a","execution":{"taskSupport":7}}`:         "",
		`{"name":"a","execution":"taskSupport"}`:             "",
		`{"name":"a","execution":{"taskSupport":"optional"}`: "", // truncated
	} {
		if got := taskSupport(json.RawMessage(def)); got != want {
			t.Errorf("taskSupport(%s) = %q, want %q", def, got, want)
		}
	}
}

func TestReadCreatedTranslatesToTheFlatShape(t *testing.T) {
	up := `{"task":{"taskId":"6f1c2a4e-0000-4000-8000-000000000001","status":"working","statusMessage":"started",` +
		`"createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:01Z","ttl":600000,"pollInterval":1000,"extra":[1]},"_meta":{}}`
	task, err := readCreated([]byte(up))
	if err != nil {
		t.Fatal(err)
	}
	got := string(task.flat("task", "mcpgw-task-X").Bytes())
	want := `{"resultType":"task","taskId":"mcpgw-task-X","status":"working","statusMessage":"started",` +
		`"createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:01Z","ttlMs":600000,"pollIntervalMs":1000}`
	if got != want {
		t.Errorf("flat = %s\nwant   %s", got, want)
	}
	// ttl null (kept forever) and no poll interval: the members are left out.
	task, err = readCreated([]byte(`{"task":{"taskId":"1","status":"completed","ttl":null}}`))
	if err != nil || string(task.flat("complete", "g").Bytes()) != `{"resultType":"complete","taskId":"g","status":"completed"}` {
		t.Errorf("ttl null: %s %v", task.flat("complete", "g").Bytes(), err)
	}
}

func TestReadCreatedRefusesMalformedAnswers(t *testing.T) {
	for bad, why := range map[string]string{
		`{"content":[{"type":"text","text":"done"}]}`: "no task member",
		`{"task":null}`:                 "not an object",
		`{"task":"x"}`:                  "not an object",
		`{"task":[]}`:                   "not an object",
		`{"task":{"status":"working"}}`: "no taskId",
		`{"task":{"taskId":"","status":"working"}}`:                    "no taskId",
		`{"task":{"taskId":7,"status":"working"}}`:                     "taskId",
		`{"task":{"taskId":"a"}}`:                                      "no status",
		`{"task":{"taskId":"a","status":true}}`:                        "status",
		`{"task":{"taskId":"a","taskId":"b","status":"working"}}`:      "more than once",
		`{"task":{"taskId":"a","status":"working"},"task":{}}`:         "more than once",
		`{"task":{"taskId":"a","status":"working","ttl":"60"}}`:        "ttl",
		`{"task":{"taskId":"a","status":"working","ttl":-1}}`:          "ttl",
		`{"task":{"taskId":"a","status":"working","pollInterval":{}}}`: "pollInterval",
		`{"task":{"TaskId":"a","status":"working"}}`:                   "no taskId",
		`{"task":{"taskId":"a","status":"working"`:                     "",
		`[]`: "",
	} {
		_, err := readCreated([]byte(bad))
		if err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("readCreated(%s) = %v, want an error about %q", bad, err, why)
		}
	}
}

func TestBridgeCallMakesTheCallATask(t *testing.T) {
	caps := `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`
	for _, c := range []struct {
		caps, support, wantParams string
		refused                   bool
	}{
		{caps, "optional", `{"name":"a","task":{"ttl":600000}}`, false},
		{caps, "required", `{"name":"a","task":{"ttl":600000}}`, false},
		{caps, "forbidden", `{"name":"a"}`, false},
		{caps, "", `{"name":"a"}`, false},
		{`{}`, "optional", `{"name":"a"}`, false},
		{`{}`, "required", `{"name":"a"}`, true},
		{`{"extensions":{"io.modelcontextprotocol/tasks":null}}`, "required", `{"name":"a"}`, true},
	} {
		var got collectOutbox
		s := &session.Session{Transport: "stateless", Rec: store.Record{ClientCaps: json.RawMessage(c.caps)}}
		def := `{"name":"a"}`
		if c.support != "" {
			def = `{"name":"a","execution":{"taskSupport":"` + c.support + `"}}`
		}
		o := &taskCreateOutbox{Outbox: &got, s: s, server: "srv", def: json.RawMessage(def)}
		call := &upstreamCall{s: s, m: &wire.Msg{ID: json.RawMessage(`1`)}, params: []byte(`{"name":"a"}`), out: o}
		_, done := o.bridgeCall(call)
		if string(call.params) != c.wantParams || done != c.refused || o.bridge != (c.wantParams != `{"name":"a"}`) || o.def != nil {
			t.Errorf("%s %s: params %s, refused %v, bridge %v", c.caps, c.support, call.params, done, o.bridge)
		}
		if c.refused && !strings.Contains(string(got.msg), `"code":-32021`) {
			t.Errorf("%s %s: answered %s, want -32021", c.caps, c.support, got.msg)
		}
	}
}

// TestBridgeReplyRecordsAndAnswersFlat: the upstream's CreateTaskResult is recorded as a
// bridged route of the stateless caller (principal and agent) and answered flat under the
// gateway's id; a malformed one is -32603 and records nothing.
func TestBridgeReplyRecordsAndAnswersFlat(t *testing.T) {
	dp := New(Parts{Cfg: &config.Config{}, Ctx: context.Background(), Store: store.NewMemory(),
		Host: liveHost{live: map[string]*session.Session{}}, Obs: MetricsHooks(telemetry.NewMetrics("all")),
		Log: slog.New(slog.DiscardHandler)}, "__")
	s := session.New(noSessionHost{}, store.Record{ID: "st-1", Agent: "a", Principal: "p"})
	s.Transport = "stateless"
	reply := func(result string) string {
		var got collectOutbox
		o := &taskCreateOutbox{Outbox: &got, dp: dp, s: s, server: "ev", conn: &upstream.Conn{Name: "ev"}, bridge: true, ttl: bridgeTTL}
		if err := o.Reply(wire.Result(json.RawMessage(`7`), []byte(result))); err != nil {
			t.Fatal(err)
		}
		return string(got.msg)
	}
	for _, bad := range []string{`{"content":[]}`, `{"task":{"taskId":"a","taskId":"b","status":"working"}}`, `{"task":{"taskId":1,"status":"working"}}`} {
		if got := reply(bad); !strings.Contains(got, `"code":-32603`) || !strings.Contains(got, `no valid CreateTaskResult`) {
			t.Errorf("reply to %s: %s, want -32603", bad, got)
		}
	}
	if es, _ := dp.tasks.List(taskOwner(s)); len(es) != 0 {
		t.Fatalf("malformed answers recorded %d routes", len(es))
	}
	up := "0f8c1b2a-1111-4222-8333-444455556666"
	got := reply(`{"task":{"taskId":"` + up + `","status":"working","statusMessage":"task ` + up + ` started","ttl":60000,"pollInterval":500}}`)
	es, _ := dp.tasks.List(taskOwner(s))
	if len(es) != 1 || !es[0].Bridge || es[0].UpstreamID != up || es[0].Server != "ev" {
		t.Fatalf("routes %+v, want one bridged route of %s", es, up)
	}
	want := `{"jsonrpc":"2.0","id":7,"result":{"resultType":"task","taskId":"` + es[0].ID + `","status":"working","statusMessage":"task ` + es[0].ID + ` started","ttlMs":60000,"pollIntervalMs":500}}`
	if got != want {
		t.Errorf("answer %s\nwant   %s", got, want)
	}
}
