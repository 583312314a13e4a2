package registry

import (
	"strings"
	"testing"
)

// TestWaitingForGrantSays: the state of a per-user server whose catalogue waits names
// what it waits for: a person's authorization, a caller's token to exchange, or the next
// retry after its borrowed grant was refused.
func TestWaitingForGrantSays(t *testing.T) {
	for _, c := range []struct {
		e    WaitingForGrant
		want string
	}{
		{WaitingForGrant{Server: "crm"}, "GET /oauth/connect/crm"},
		{WaitingForGrant{Server: "crm", Exchange: true}, "Authorization: Bearer"},
		{WaitingForGrant{Server: "crm", Exchange: true, Refused: true, Status: 401}, "refused the grant mcpgw lists crm's tools with (HTTP 401)"},
	} {
		if got := c.e.Error(); !strings.Contains(got, c.want) {
			t.Errorf("%+v: %q, want it to say %q", c.e, got, c.want)
		}
	}
}
