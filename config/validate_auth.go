package config

import (
	"encoding/hex"
	"fmt"
	"strings"
)

// validateAuth checks auth: the mode and what it needs, the JWT keys, the API keys and
// auth.metrics.
func (c validator) validateAuth(ps *Problems) {
	switch c.Auth.Mode {
	case "none", "api_key":
	case "jwt":
		if len(c.Auth.JWT.Keys) == 0 {
			ps.add(false, "auth.jwt.keys", "mode jwt needs at least one key")
		}
	case "oauth":
		if c.Auth.OAuth.JWKSURL == "" {
			ps.add(false, "auth.oauth.jwks_url", "mode oauth needs the authorization server's JWKS URL")
		}
		if len(c.Auth.OAuth.AuthorizationServers) == 0 {
			ps.add(false, "auth.oauth.authorization_servers", "mode oauth needs at least one authorization server (RFC 9728)")
		}
	default:
		ps.add(false, "auth.mode", "%q is not one of none, api_key, jwt, oauth", c.Auth.Mode)
	}
	for i, k := range c.Auth.JWT.Keys {
		where := fmt.Sprintf("auth.jwt.keys[%d]", i)
		switch k.Alg {
		case "HS256", "HS384", "HS512":
			if k.Secret == "" {
				ps.add(false, where, "%s needs a secret", k.Alg)
			}
		case "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA":
			if k.PublicKey == "" && k.PublicKeyFile == "" && k.PrivateKeyFile == "" {
				ps.add(false, where, "%s needs public_key, public_key_file or private_key_file", k.Alg)
			}
		case "":
			ps.add(false, where, "missing alg (the algorithm is pinned per key)")
		default:
			ps.add(false, where, "unsupported alg %q", k.Alg)
		}
	}
	for i, k := range c.Auth.APIKeys {
		if _, ok := c.Agents[k.Agent]; len(c.Agents) > 0 && !ok {
			ps.add(false, fmt.Sprintf("auth.api_keys[%d]", i), "unknown agent %q", k.Agent)
		}
		*ps = append(*ps, c.connectionScopeProblems(fmt.Sprintf("auth.api_keys[%d].connection_scope", i), k.ConnectionScope)...)
		if _, err := hex.DecodeString(k.SHA256); err != nil || len(k.SHA256) != 64 {
			// Also catches `sha256sum` output pasted whole ("<hex>  -").
			ps.add(false, fmt.Sprintf("auth.api_keys[%d]", i), "sha256 must be 64 hex digits")
		}
	}
	switch c.Auth.DisabledAgent {
	case "", "refuse", "empty":
	default:
		ps.add(false, "auth.disabled_agent", "%q is not one of refuse, empty", c.Auth.DisabledAgent)
	}
	switch al := c.Auth.Metrics.AgentLabel; {
	case al == "all", al == "off", strings.HasPrefix(al, "top:"):
	default:
		ps.add(false, "auth.metrics.agent_label", "%q is not one of all, off, top:N", al)
	}
}
