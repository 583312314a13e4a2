package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/mcpgw/mcpgw/internal/wire"
	"github.com/mcpgw/mcpgw/registry"
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
	return c.fail("unavailable", fmt.Sprintf("upstream %q %s: %v", c.server, what, err))
}

// needConsent answers c with nc's sign-in URL, in the form c's client reads.
func (c *upstreamCall) needConsent(nc *registry.NeedConsent) {
	msg := fmt.Sprintf("%s needs your authorization before mcpgw may call it for you", c.server)
	if nc.StepUp {
		msg = fmt.Sprintf("%s needs more permissions than you granted to mcpgw", c.server)
	}
	if c.s.caps.urlElicitation && c.s.rec.ProtocolVersion >= "2025-11-25" {
		data := map[string]any{"elicitations": []map[string]string{{
			"mode": "url", "elicitationId": elicitationID(nc.URL), "url": nc.URL, "message": msg + ".",
		}}}
		_ = c.out.reply(wire.Error(c.m.ID, wire.CodeURLElicitationRequired, msg, data))
		return
	}
	text := msg + ": open " + nc.URL + " to sign in, then call again."
	if c.isTool {
		_ = c.out.reply(wire.Result(c.m.ID, toolError(text)))
		return
	}
	_ = c.out.reply(wire.Error(c.m.ID, wire.CodeInvalidRequest, text, nil))
}

// elicitationID names the elicitation of one consent URL: the same URL (a pending
// authorization is reused while it lasts) is the same elicitation.
func elicitationID(u string) string {
	sum := sha256.Sum256([]byte(u))
	return hex.EncodeToString(sum[:12])
}
