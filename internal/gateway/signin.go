package gateway

import (
	"net/http"
	"strconv"
	"time"

	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/signin"
)

// slowed refuses r with 429 while its source must wait after failed credentials.
func (gk *gatekeeper) slowed(r *http.Request) *auth.Failure {
	if !gk.signins.Holding() {
		return nil
	}
	d := gk.signins.Wait(gk.sourceOf(r))
	if d <= 0 {
		return nil
	}
	secs := int((d + time.Second - 1) / time.Second)
	return &auth.Failure{Status: http.StatusTooManyRequests, Reason: "signin_backoff",
		RetryAfter: strconv.Itoa(secs),
		Message:    "Too Many Requests: too many wrong credentials from " + gk.sourceOf(r) + "; try again in " + strconv.Itoa(secs) + " s"}
}

// credentialFailed records a wrong credential: the source is slowed, the denial audited
// (every one of the first ten, then every tenth, so a flood cannot fill the audit log)
// and counted.
func (gk *gatekeeper) credentialFailed(r *http.Request, where string) {
	g := gk.g
	src := gk.sourceOf(r)
	n := gk.signins.Failed(src)
	g.metrics.Denied("unauthenticated", "bad_credential")
	if signin.Sampled(n) {
		g.audit.Record(auth.AuditEvent{Kind: "denial", Actor: src, Action: where + " credential",
			Outcome: "refused", Rule: "wrong credential (" + strconv.Itoa(n) + " from this source)"})
	}
}
