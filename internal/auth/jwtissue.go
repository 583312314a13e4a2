package auth

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/mcpgw/mcpgw/config"
)

// narrowKeys are the fields IssueJWT accepts under the "mcpgw" claim.
var narrowKeys = map[string]bool{"servers": true, "tools": true, "read_only": true, "task": true, "conversation": true, "connection_scope": true}

// IssueJWT signs a token for agent, valid for ttl, with the first key that can sign: an HS*
// secret or a key with private_key_file. narrow, when non-empty, becomes the "mcpgw" claim
// (keys: servers, tools, read_only, connection_scope, task, conversation).
func IssueJWT(cfg config.JWTConfig, agent string, ttl time.Duration, narrow map[string]any) (string, error) {
	return issueJWT(cfg, agent, ttl, narrow, nil, time.Now())
}

// IssueJWTWithScopes is IssueJWT with a "scope" claim (space-separated), e.g. mcpgw:admin.
func IssueJWTWithScopes(cfg config.JWTConfig, agent string, ttl time.Duration, narrow map[string]any, scopes []string) (string, error) {
	return issueJWT(cfg, agent, ttl, narrow, scopes, time.Now())
}

func issueJWT(cfg config.JWTConfig, agent string, ttl time.Duration, narrow map[string]any, scopes []string, now time.Time) (string, error) {
	if agent == "" {
		return "", errors.New("jwt issue: agent is empty")
	}
	if ttl <= 0 {
		return "", fmt.Errorf("jwt issue: ttl %v must be positive", ttl)
	}
	for k := range narrow {
		if !narrowKeys[k] {
			return "", fmt.Errorf("jwt issue: unknown narrowing field %q (want servers, tools, read_only, connection_scope, task, conversation)", k)
		}
	}
	idx := -1
	for i, k := range cfg.Keys {
		if (isHMAC(k.Alg) && k.Secret != "") || (!isHMAC(k.Alg) && k.PrivateKeyFile != "") {
			idx = i
			break
		}
	}
	if idx < 0 {
		return "", errors.New("jwt issue: no key can sign (need an HS* key with a secret, or a key with private_key_file)")
	}
	k := cfg.Keys[idx]
	signKey, err := loadSigningKey(k)
	if err != nil {
		return "", fmt.Errorf("jwt issue: key %d%s: %w", idx, kidNote(k.Kid), err)
	}
	method := jwt.GetSigningMethod(k.Alg)
	if method == nil {
		return "", fmt.Errorf("jwt issue: key %d: unsupported alg %q", idx, k.Alg)
	}
	agentClaim := cfg.AgentClaim
	if agentClaim == "" {
		agentClaim = "sub"
	}
	now = now.Truncate(time.Second)
	mc := jwt.MapClaims{
		"sub": agent,
		"iat": now.Unix(),
		"nbf": now.Unix(),
		"exp": now.Add(ttl).Unix(),
	}
	mc[agentClaim] = agent
	if cfg.Issuer != "" {
		mc["iss"] = cfg.Issuer
	}
	if cfg.Audience != "" {
		mc["aud"] = cfg.Audience
	}
	if len(narrow) > 0 {
		mc[narrowClaim] = narrow
	}
	if len(scopes) > 0 {
		mc["scope"] = strings.Join(scopes, " ")
	}
	t := jwt.NewWithClaims(method, mc)
	if k.Kid != "" {
		t.Header["kid"] = k.Kid
	}
	s, err := t.SignedString(signKey)
	if err != nil {
		return "", fmt.Errorf("jwt issue: sign: %w", err)
	}
	return s, nil
}
