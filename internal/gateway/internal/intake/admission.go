package intake

import (
	"encoding/json"
	"net/http"

	"github.com/mcpgw/mcpgw/internal/auth"
)

// Admitter is the gateway as an HTTP transport asks it to admit a request: one question,
// whose answer is the caller and the session it may use, or a refusal already written.
type Admitter[S any] interface {
	// Admit admits r in this order, stopping at the first refusal (written by whoever
	// refuses): the browser origin (Host and Origin allow-lists); rd.Head, what r's method
	// and headers decide alone; the caller's credential; rd.Read, the request's content,
	// read for an admitted caller only, which names the session it needs; that session
	// (404 unknown or ended, 503 store unavailable); whether the caller may use it (403);
	// rd.Accepts, the session's negotiated version; then, if asked, the session is marked
	// used.
	Admit(w http.ResponseWriter, r *http.Request, rd Reading) (Admission[S], bool)
}

// Admission is an admitted request: its caller and, when it named one, its session, which
// carries what the caller may see there (its view).
type Admission[S any] struct {
	ID *auth.Identity
	// Session is the session the request named, when Has.
	Session S
	Has     bool
	// Version is the session's negotiated protocol version ("" without a session).
	Version string
}

// Reading is a transport's part of admitting one request (Admitter.Admit): its own rules,
// at their places in the order. A method that returns false has written the answer.
type Reading interface {
	// Head checks what r's method and headers decide before the caller is known.
	Head(w http.ResponseWriter, r *http.Request) bool
	// Read reads the request of the admitted caller id (its body, if it has one) and
	// names the session it needs (Want{}: none).
	Read(w http.ResponseWriter, r *http.Request, id *auth.Identity) (Want, bool)
	// Accepts checks that the request may use a session negotiated at version v.
	Accepts(w http.ResponseWriter, r *http.Request, v string) bool
}

// Want is the session a request needs.
type Want struct {
	// Session is its id ("": none).
	Session string
	// MsgID is the JSON-RPC id a refusal of the session answers.
	MsgID json.RawMessage
	// Transport, when set, admits only a session live in this process and opened on that
	// transport (the legacy SSE sessions, which are never revived from the store).
	Transport string
	// Touch marks the session used once admitted.
	Touch bool
}

// BodyLimit bounds a request body: Max, or Trusted for a trusted socket peer when larger.
type BodyLimit struct{ Max, Trusted int64 }

// Read reads r's body within the limit (ReadBody).
func (l BodyLimit) Read(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	limit := l.Max
	if auth.Trusted(r.Context()) && limit < l.Trusted {
		limit = l.Trusted
	}
	return ReadBody(w, r, limit)
}
