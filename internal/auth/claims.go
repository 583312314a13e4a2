package auth

import (
	"strings"

	"github.com/golang-jwt/jwt/v5"
)

// claimsFrom builds Claims from a verified token's claims.
func claimsFrom(mc jwt.MapClaims, agentClaim string) (*Claims, error) {
	c := &Claims{}
	if sub, ok := mc["sub"]; ok {
		s, ok := sub.(string)
		if !ok {
			return nil, invalid("malformed sub claim")
		}
		c.Subject = s
	}
	agent, _ := mc[agentClaim].(string)
	if agent == "" {
		return nil, invalid("missing agent claim")
	}
	c.Agent = agent
	if exp, err := mc.GetExpirationTime(); err == nil && exp != nil {
		c.Expiry = exp.Time
	}
	var err error
	if c.Scopes, err = scopesFrom(mc); err != nil {
		return nil, err
	}
	raw, present := mc[narrowClaim]
	if !present || raw == nil {
		return c, nil
	}
	n, ok := raw.(map[string]any)
	if !ok {
		return nil, invalid("malformed mcpgw claim")
	}
	if err := narrowFrom(c, n); err != nil {
		return nil, err
	}
	return c, nil
}

// scopesFrom reads "scope" (space-separated) or, when it is absent, "scp" (space-separated
// or a list).
func scopesFrom(mc jwt.MapClaims) ([]string, error) {
	switch s := mc["scope"].(type) {
	case nil:
	case string:
		if scopes := strings.Fields(s); scopes != nil {
			return scopes, nil
		}
	default:
		return nil, invalid("malformed scope claim")
	}
	switch s := mc["scp"].(type) {
	case nil:
		return nil, nil
	case string:
		return strings.Fields(s), nil
	case []any:
		ss, ok := stringList(s)
		if !ok {
			return nil, invalid("malformed scp claim")
		}
		return ss, nil
	default:
		return nil, invalid("malformed scp claim")
	}
}

// narrowFrom reads the members of the "mcpgw" claim into c.
func narrowFrom(c *Claims, n map[string]any) error {
	var err error
	if c.Servers, err = narrowList(n, "servers"); err != nil {
		return err
	}
	if c.Tools, err = narrowList(n, "tools"); err != nil {
		return err
	}
	if c.ConnectionScope, err = narrowList(n, "connection_scope"); err != nil {
		return err
	}
	if v, ok := n["read_only"]; ok && v != nil {
		if c.ReadOnly, ok = v.(bool); !ok {
			return narrowBad("read_only")
		}
	}
	if c.Task, err = narrowString(n, "task"); err != nil {
		return err
	}
	if c.Conversation, err = narrowString(n, "conversation"); err != nil {
		return err
	}
	return nil
}

func narrowBad(field string) error { return invalid("malformed mcpgw.%s claim", field) }

// narrowList reads a list of strings of the "mcpgw" claim; absent or null is nil.
func narrowList(n map[string]any, field string) ([]string, error) {
	v, ok := n[field]
	if !ok || v == nil {
		return nil, nil
	}
	l, ok := v.([]any)
	if !ok {
		return nil, narrowBad(field)
	}
	ss, ok := stringList(l)
	if !ok {
		return nil, narrowBad(field)
	}
	return ss, nil
}

// narrowString reads a string of the "mcpgw" claim; absent or null is "".
func narrowString(n map[string]any, field string) (string, error) {
	v, ok := n[field]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", narrowBad(field)
	}
	return s, nil
}

// stringList converts a JSON array of strings; an empty array gives a non-nil empty slice.
func stringList(l []any) ([]string, bool) {
	out := make([]string, 0, len(l))
	for _, e := range l {
		s, ok := e.(string)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}
