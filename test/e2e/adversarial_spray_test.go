package e2e

// Answers sprayed at another session's server-to-client requests. The sql plugin asks its
// caller to confirm a delete with elicitation/create on the call's own stream; while that
// request waits, another agent's session posts answers ("decline") at every id it could
// think of: the counter ids the gateway used to issue (mcpgw-r1..r50), ids of the current
// shape, and even the real id (as if it had leaked). None may touch the owner's request:
// the owner's own accept must still complete its call.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// requestIDShape is the shape of the gateway's server-to-client request ids: a prefix
// and 96 random bits.
var requestIDShape = regexp.MustCompile(`^mcpgw-r[A-Za-z0-9_-]{16}$`)

func TestAdversarialAnswerSpray(t *testing.T) {
	g := pluginGateway(t)
	owner := advOpenSession(t, g.URL, map[string]string{"X-Agent-ID": "writer"}, rawProtocolVersion, `{"elicitation":{}}`)
	attacker := advOpenSession(t, g.URL, map[string]string{"X-Agent-ID": "reader"}, rawProtocolVersion, `{"elicitation":{}}`)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	callID := owner.newID()
	msgs, readErr := sprayPostStream(ctx, owner, fmt.Sprintf(
		`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"shop_shop_v1_orders_delete","arguments":{"connectionId":"shop","id":"4"}}}`, callID))

	// The owner's call waits for its confirmation.
	var asked advMsg
	select {
	case m, ok := <-msgs:
		if !ok || m.Method != "elicitation/create" {
			t.Fatalf("want the plugin's elicitation/create on the call's stream first, got %v (stream open: %v, error: %v)", m, ok, readErr())
		}
		asked = m
	case <-ctx.Done():
		t.Fatal("no elicitation/create on the owner's call stream within 60 s")
	}
	var realID string
	if err := json.Unmarshal(asked.ID, &realID); err != nil {
		t.Fatalf("the elicitation's id %s is not a string", asked.ID)
	}
	if !requestIDShape.MatchString(realID) {
		t.Errorf("the elicitation's id %q is not of the shape %s (guessable?)", realID, requestIDShape)
	}

	// The spray: old counter ids, ids of the current shape, and the real one.
	var ids []string
	for i := 1; i <= 50; i++ {
		ids = append(ids, fmt.Sprintf("mcpgw-r%d", i))
	}
	for range 50 {
		b := make([]byte, 12)
		_, _ = rand.Read(b)
		ids = append(ids, "mcpgw-r"+base64.RawURLEncoding.EncodeToString(b))
	}
	ids = append(ids, realID)
	for _, id := range ids {
		a, err := attacker.post(ctx, []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"result":{"action":"decline"}}`, id)))
		if err != nil {
			t.Fatalf("attacker's answer to %s: %v", id, err)
		}
		if a.Status >= 500 {
			t.Errorf("attacker's answer to %s: %s", id, a)
		}
	}
	metrics, err := getMetrics(g)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := metricValue(metrics, "mcpgw_client_responses_dropped_total", map[string]string{"reason": "wrong_session"}); n != 1 {
		t.Errorf(`mcpgw_client_responses_dropped_total{reason="wrong_session"} = %v, want 1 (the real id from the other session)`, n)
	}
	if n, _ := metricValue(metrics, "mcpgw_client_responses_dropped_total", map[string]string{"reason": "unknown"}); n < 100 {
		t.Errorf(`mcpgw_client_responses_dropped_total{reason="unknown"} = %v, want at least 100 (the guessed ids)`, n)
	}

	// The owner answers; its call completes with its own answer.
	a, err := owner.post(ctx, []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"result":{"action":"accept","content":{"confirm":true}}}`, realID)))
	if err != nil || a.Status != http.StatusAccepted {
		t.Fatalf("the owner's answer: %v %s", err, a)
	}
	for {
		select {
		case m, ok := <-msgs:
			if !ok {
				t.Fatalf("the owner's call stream ended without its result (%v)", readErr())
			}
			if !m.isResponse() || string(m.ID) != fmt.Sprint(callID) {
				continue
			}
			text, _, err := advToolText(m, advAnswer{})
			if err != nil || !strings.Contains(text, `"cancelled"`) {
				t.Fatalf("the owner's confirmed delete: %v %q; want the deleted order (the owner's accept, not the attacker's decline)", err, text)
			}
			advGatewayAlive(t, g, "the answer spray")
			return
		case <-ctx.Done():
			t.Fatal("the owner's call did not complete within 60 s of its answer")
		}
	}
}

// sprayPostStream POSTs body on s and delivers the messages of its event stream as they
// come (the call's related requests before its result); the channel closes at the
// stream's end, and readErr then says why.
func sprayPostStream(ctx context.Context, s *advSession, body string) (<-chan advMsg, func() error) {
	out := make(chan advMsg, 16)
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(out)
		req, e := http.NewRequestWithContext(ctx, http.MethodPost, s.URL, bytes.NewReader([]byte(body)))
		if e != nil {
			err = e
			return
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range s.headers() {
			req.Header.Set(k, v)
		}
		resp, e := http.DefaultClient.Do(req)
		if e != nil {
			err = e
			return
		}
		defer resp.Body.Close()
		err = advReadSSE(resp.Body, func(ev advSSEEvent) bool {
			if m, ok := advParse([]byte(ev.Data)); ok {
				select {
				case out <- m:
				case <-ctx.Done():
					return false
				}
			}
			return true
		})
	}()
	return out, func() error {
		select {
		case <-done:
			return err
		default:
			return nil
		}
	}
}
