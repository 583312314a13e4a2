package runners

import (
	"net/http"

	"github.com/mcpgw/mcpgw/internal/auth"
)

// Signins slows wrong runner keys per source, with the gateway's other guessable
// credentials (the admin API's, the local token's: the gateway's one sign-in guard). A
// runner key opens the executor's servers' command lines and environment to its holder,
// and may be any string whose SHA-256 the config holds, so guessing it must cost time as
// guessing an admin token does (docs/runners.md, "Trust").
type Signins interface {
	// Slowed is the refusal (429, with RetryAfter) of a source that must still wait after
	// wrong credentials; nil when it may try now.
	Slowed(r *http.Request) *auth.Failure
	// CredentialFailed counts a wrong credential from r's source (where names the door).
	CredentialFailed(r *http.Request, where string)
	// CredentialSucceeded forgets r's source's wrong credentials.
	CredentialSucceeded(r *http.Request)
}

// slowed answers r with 429 and reports true when its source must still wait; a hub
// without Signins slows nobody.
func (h *Hub) slowed(w http.ResponseWriter, r *http.Request) bool {
	if h.Signins == nil {
		return false
	}
	fail := h.Signins.Slowed(r)
	if fail == nil {
		return false
	}
	w.Header().Set("Retry-After", fail.RetryAfter)
	refuse(w, fail.Status, fail.Message)
	return true
}

// keyChecked tells Signins how a presented key fared.
func (h *Hub) keyChecked(r *http.Request, ok bool) {
	switch {
	case h.Signins == nil:
	case ok:
		h.Signins.CredentialSucceeded(r)
	default:
		h.Signins.CredentialFailed(r, "runner")
	}
}
