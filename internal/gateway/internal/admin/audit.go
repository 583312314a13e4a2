package admin

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"

	"github.com/mcpgw/mcpgw/internal/auth"
)

// Hash is a short content hash of v: ETags and the audit log's before/after.
func Hash(v any) string {
	if v == nil {
		return ""
	}
	b, _ := json.Marshal(v)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// AuditWrite writes to g's audit log one line for an admin write made by r's caller (the
// admin API's or the UI's): its caller, method and path, the object, the outcome, and
// hashes of the object before and after.
func AuditWrite(g Guard, r *http.Request, object, outcome string, before, after any) {
	g.Audit(auth.AuditEvent{Kind: "admin", Actor: Actor(r), Action: r.Method + " " + r.URL.Path,
		Object: object, Outcome: outcome, Before: Hash(before), After: Hash(after)})
}
