package dispatch

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/backroutes"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/telemetry"
	"github.com/mcpgw/mcpgw/internal/store"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// droppedAnswers reads mcpgw_client_responses_dropped_total{reason} as a scrape would.
func droppedAnswers(m *telemetry.Metrics, reason string) float64 {
	fams, _ := m.Gather()
	for _, f := range fams {
		if f.GetName() != "mcpgw_client_responses_dropped_total" {
			continue
		}
		for _, s := range f.GetMetric() {
			for _, l := range s.GetLabel() {
				if l.GetName() == "reason" && l.GetValue() == reason {
					return s.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// TestAnswerFromAnotherSessionChangesNothing: an answer to a server-to-client request that
// comes from a session other than the one asked is dropped, counted and logged with both
// sessions, and the request still waits for its owner, whose answer completes it. (It used
// to delete the pending entry before checking the owner: any session that knew or guessed
// the id cancelled another's elicitation.)
func TestAnswerFromAnotherSessionChangesNothing(t *testing.T) {
	var logs bytes.Buffer
	metrics := telemetry.NewMetrics("all")
	dp := New(Parts{Cfg: &config.Config{}, Ctx: context.Background(), Host: fakeHost{}, Obs: MetricsHooks(metrics),
		Log: slog.New(slog.NewJSONHandler(&logs, nil))}, "__")
	owner, other := session.New(noSessionHost{}, store.Record{ID: "owner-session"}), session.New(noSessionHost{}, store.Record{ID: "other-session"})
	wait := make(chan backroutes.Answer, 1)
	id := dp.Routes().Ask(backroutes.Request[*session.Session]{Session: owner, Wait: wait})

	dp.ClientResponse(other, &wire.Msg{ID: wire.Quote(id), Result: json.RawMessage(`{"action":"decline"}`)})
	select {
	case a := <-wait:
		t.Fatalf("another session's answer reached the owner's request: %s", a.Result)
	default:
	}
	if !dp.Routes().Pending(id) {
		t.Fatal("another session's answer removed the owner's pending request")
	}
	if n := droppedAnswers(metrics, "wrong_session"); n != 1 {
		t.Errorf(`mcpgw_client_responses_dropped_total{reason="wrong_session"} = %v, want 1`, n)
	}
	line := logs.String()
	if !strings.Contains(line, `"level":"WARN"`) || !strings.Contains(line, "owner-session") || !strings.Contains(line, "other-session") {
		t.Errorf("want a warning naming both sessions, logged: %s", line)
	}

	dp.ClientResponse(owner, &wire.Msg{ID: wire.Quote(id), Result: json.RawMessage(`{"action":"accept","content":{"confirm":true}}`)})
	select {
	case a := <-wait:
		if !strings.Contains(string(a.Result), `"accept"`) {
			t.Errorf("the owner's request got %s, want the owner's accept", a.Result)
		}
	default:
		t.Fatal("the owner's answer did not reach its request")
	}
	if dp.Routes().Pending(id) {
		t.Error("the answered request is still pending")
	}

	dp.ClientResponse(owner, &wire.Msg{ID: wire.Quote("mcpgw-r1"), Result: json.RawMessage(`{}`)})
	if n := droppedAnswers(metrics, "unknown"); n != 1 {
		t.Errorf(`mcpgw_client_responses_dropped_total{reason="unknown"} = %v, want 1`, n)
	}
}
