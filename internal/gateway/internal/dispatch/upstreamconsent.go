package dispatch

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// A call to an OAuth upstream whose grant is the caller's own, made before the caller has
// authorized it (or after the grant was revoked or no longer suffices), is answered with
// the way to authorize (docs/auth.md, "Consent per client kind"): a client that declared
// URL-mode elicitation gets the URLElicitationRequired error naming the sign-in URL, to
// open and then retry; any other client gets the URL in a tool result with isError (the
// model reads it and can pass it on), or in the error of a request that is not a tool
// call.

// outcomeConsent is the metrics outcome of a call answered with a sign-in URL.
const outcomeConsent = "consent"

// failUpstream answers c with a failure of its upstream: the way to authorize when err
// says the upstream waits for the caller's authorization, else what went wrong.
func (c *upstreamCall) failUpstream(what string, err error) string {
	var nc *registry.NeedConsent
	if errors.As(err, &nc) {
		c.needConsent(nc)
		return outcomeConsent
	}
	if outcome, ok := c.taskLost(err); ok {
		return outcome
	}
	return c.fail("unavailable", fmt.Sprintf("upstream %q %s: %v", c.server, what, err))
}

// needConsent answers c with nc's sign-in URL and its code, in the form c's client reads.
// The code is told to this session only: the consent page asks for it, so the URL alone,
// sent to someone else, does not give that person's upstream account to this identity.
func (c *upstreamCall) needConsent(nc *registry.NeedConsent) {
	msg := fmt.Sprintf("%s needs your authorization before mcpgw may call it for you", c.server)
	if nc.StepUp {
		msg = fmt.Sprintf("%s needs more permissions than you granted to mcpgw", c.server)
	}
	if c.s.Caps.URLElicitation && c.s.Rec.ProtocolVersion >= "2025-11-25" {
		data := map[string]any{"elicitations": []map[string]string{{
			"mode": "url", "elicitationId": elicitationID(nc.URL), "url": nc.URL,
			"message": msg + ". The page asks for the code " + nc.Code + ": enter it only if you opened the page yourself.",
		}}}
		_ = c.out.Reply(wire.Error(c.m.ID, wire.CodeURLElicitationRequired, msg, data))
		c.dp.consents.add(c.server, c.dp.Reg.UpstreamAuth().GrantSubject(c.server, session.Subject(c.s.Rec.Principal, c.s.Rec.Agent)), c.s.ID, elicitationID(nc.URL))
		return
	}
	text := msg + ": open " + nc.URL + " and enter the code " + nc.Code + " to sign in, then call again."
	if c.isTool {
		_ = c.out.Reply(wire.Result(c.m.ID, toolError(text)))
		return
	}
	_ = c.out.Reply(wire.Error(c.m.ID, wire.CodeInvalidRequest, text, nil))
}

// elicitationID names the elicitation of one consent URL: the same URL (a pending
// authorization is reused while it lasts) is the same elicitation.
func elicitationID(u string) string {
	sum := sha256.Sum256([]byte(u))
	return hex.EncodeToString(sum[:12])
}

// consentWaiters are the sessions given a URL elicitation for a grant, by server and
// subject, so that each is sent notifications/elicitation/complete once the grant is
// given (on this replica: a callback another replica served tells its own sessions).
// Bounded: past maxConsentWaiters sessions nobody more is remembered, and the client
// still learns by retrying.
type consentWaiters struct {
	mu sync.Mutex
	n  int
	m  map[consentKey]map[string]string // session id → elicitation id
}

type consentKey struct{ server, subject string }

const maxConsentWaiters = 4096

func (w *consentWaiters) add(server, subject, session, elicitation string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	k := consentKey{server, subject}
	if w.m == nil {
		w.m = map[consentKey]map[string]string{}
	}
	if _, ok := w.m[k][session]; ok || w.n >= maxConsentWaiters {
		if ok {
			w.m[k][session] = elicitation
		}
		return
	}
	if w.m[k] == nil {
		w.m[k] = map[string]string{}
	}
	w.m[k][session] = elicitation
	w.n++
}

// take forgets and returns the sessions waiting for subject's grant at server.
func (w *consentWaiters) take(server, subject string) map[string]string {
	w.mu.Lock()
	defer w.mu.Unlock()
	k := consentKey{server, subject}
	out := w.m[k]
	delete(w.m, k)
	w.n -= len(out)
	return out
}

// ConsentGiven tells the sessions that waited for subject's grant at server that their
// elicitation completed.
func (dp *Dispatcher) ConsentGiven(server, subject string) {
	for sid, id := range dp.consents.take(server, subject) {
		if s := dp.Host.Live(sid); s != nil {
			_ = s.Send(wire.Notification("notifications/elicitation/complete", []byte(`{"elicitationId":"`+id+`"}`)))
		}
	}
}
