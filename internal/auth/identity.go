package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/mcpgw/mcpgw/config"
)

// DefaultAgent is the agent every caller is when the config has no agents section.
const DefaultAgent = "default"

// Identity is who a request comes from.
type Identity struct {
	Agent        string
	Conversation string
	Task         string
	// Project is the project of the session's task (set with the task's servers by who
	// looks the task up); its servers narrow the session before the task's own do.
	Project  string
	Executor string
	// Method is how the agent was established: header, api_key, jwt or oauth.
	Method string
	// Principal binds sessions: a session may only be used by the principal that opened it.
	Principal string
	// Claims narrow what a token holder may use (nil without a token).
	Claims *Claims
}

// Failure is an authentication or authorization refusal, with the HTTP answer it needs.
type Failure struct {
	Status          int // 401, 403, or 429 while wrong credentials are slowed
	Message         string
	WWWAuthenticate string
	Reason          string // short label for metrics and the audit log
	RetryAfter      string // seconds, with 429
}

func (f *Failure) Error() string { return f.Message }

// Authenticator turns requests into identities under one config.
type Authenticator struct {
	cfg         *config.Config
	jwt         *JWTVerifier
	oauth       *OAuthVerifier
	keys        *KeyFile
	staticKeys  map[string]config.APIKeyDef // sha256 → the key's definition
	metadataURL string

	// hdr holds the identity header names in canonical form, so that looking them up
	// does not canonicalise them on every request.
	hdr struct{ Agent, Conversation, Task, Executor string }

	// principals caches "agent:" + name for header-named agents (mode none and the
	// socket), so that a request does not build the same string again.
	pmu        sync.RWMutex
	principals map[string]string
}

// maxCachedPrincipals bounds the principal cache: names come from request headers.
const maxCachedPrincipals = 4096

func (a *Authenticator) agentPrincipal(agent string) string {
	a.pmu.RLock()
	p, ok := a.principals[agent]
	a.pmu.RUnlock()
	if ok {
		return p
	}
	p = "agent:" + agent
	a.pmu.Lock()
	if a.principals == nil {
		a.principals = map[string]string{}
	}
	if len(a.principals) < maxCachedPrincipals {
		a.principals[agent] = p
	}
	a.pmu.Unlock()
	return p
}

// NewAuthenticator prepares the verifiers of cfg.Auth. keys may be nil.
func NewAuthenticator(cfg *config.Config, keys *KeyFile) (*Authenticator, error) {
	a := &Authenticator{cfg: cfg, keys: keys, staticKeys: map[string]config.APIKeyDef{}}
	h := cfg.Auth.Headers
	a.hdr.Agent, a.hdr.Conversation = http.CanonicalHeaderKey(h.Agent), http.CanonicalHeaderKey(h.Conversation)
	a.hdr.Task, a.hdr.Executor = http.CanonicalHeaderKey(h.Task), http.CanonicalHeaderKey(h.Executor)
	for _, k := range cfg.Auth.APIKeys {
		a.staticKeys[strings.ToLower(k.SHA256)] = k
	}
	var err error
	switch cfg.Auth.Mode {
	case "jwt":
		if a.jwt, err = NewJWTVerifier(cfg.Auth.JWT); err != nil {
			return nil, err
		}
	case "oauth":
		if a.oauth, err = NewOAuthVerifier(cfg.Auth.OAuth, nil); err != nil {
			return nil, err
		}
		a.metadataURL = metadataURL(cfg)
	}
	return a, nil
}

// metadataURL is where the RFC 9728 document is served: the path-inserted form for the
// resource (https://gw/.well-known/oauth-protected-resource/mcp for https://gw/mcp).
func metadataURL(cfg *config.Config) string {
	res := strings.TrimRight(cfg.Auth.OAuth.Resource, "/")
	if res == "" {
		res = "http://" + cfg.Listen + "/mcp"
	}
	origin, path := res, ""
	if i := strings.Index(res, "://"); i >= 0 {
		if j := strings.IndexByte(res[i+3:], '/'); j >= 0 {
			origin, path = res[:i+3+j], res[i+3+j:]
		}
	}
	return origin + "/.well-known/oauth-protected-resource" + path
}

func (a *Authenticator) challenge(code, desc string) string {
	if a.cfg.Auth.Mode == "oauth" {
		return WWWAuthenticate(a.metadataURL, a.cfg.Auth.OAuth.Scopes, code, desc)
	}
	if code == "" && desc == "" {
		return `Bearer realm="mcpgw"`
	}
	return `Bearer realm="mcpgw", ` + strings.TrimPrefix(WWWAuthenticate("", nil, code, desc), "Bearer ")
}

func (a *Authenticator) unauthorized(reason, desc string) *Failure {
	code := "invalid_token"
	if reason == "no_credentials" {
		code = ""
	}
	return &Failure{Status: http.StatusUnauthorized, Message: "Unauthorized: " + desc, Reason: reason,
		WWWAuthenticate: a.challenge(code, desc)}
}

// BearerToken reads the token of an Authorization header with the Bearer scheme. The
// scheme name is case-insensitive (RFC 7235, section 2.1), and one or more spaces may
// separate it from the token.
func BearerToken(authz string) (string, bool) {
	const scheme = "bearer"
	if len(authz) <= len(scheme) || !strings.EqualFold(authz[:len(scheme)], scheme) || authz[len(scheme)] != ' ' {
		return "", false
	}
	token := strings.TrimSpace(authz[len(scheme):])
	return token, token != ""
}

// Authenticate establishes the identity of r. Identity headers are trusted only in mode
// none; with credentials, a header that contradicts the credential is refused (403).
// An empty Agent in mode none means the request named none (the caller decides: the
// default agent, or the agent of the session it continues).
func (a *Authenticator) Authenticate(ctx context.Context, r *http.Request) (*Identity, *Failure) {
	h := &a.hdr
	get := func(name, std string) string {
		v := strings.TrimSpace(HeaderValue(r.Header, name))
		if v == "" && name != std && Trusted(ctx) {
			// mcpgw-bridge on the socket sends the standard names.
			v = strings.TrimSpace(HeaderValue(r.Header, std))
		}
		return v
	}
	id := &Identity{
		Agent:        get(h.Agent, "X-Agent-Id"),
		Conversation: get(h.Conversation, "X-Conversation-Id"),
		Task:         get(h.Task, "X-Task-Id"),
		Executor:     get(h.Executor, "X-Executor-Id"),
	}
	if a.cfg.Auth.Mode == "none" || Trusted(ctx) {
		id.Method = "header"
		if id.Agent == "" && len(a.cfg.Agents) == 0 {
			id.Agent = DefaultAgent
		}
		id.Principal = a.agentPrincipal(id.Agent)
		return id, a.checkAgent(id)
	}
	token, ok := BearerToken(r.Header.Get("Authorization"))
	if !ok {
		return nil, a.unauthorized("no_credentials", "missing bearer token")
	}
	claims, fail := a.verifyCredential(ctx, token, id)
	if fail != nil {
		return nil, fail
	}
	if fail := a.contradicts(id, claims); fail != nil {
		return nil, fail
	}
	id.Agent = claims.Agent
	if claims.Task != "" {
		id.Task = claims.Task
	}
	if claims.Conversation != "" {
		id.Conversation = claims.Conversation
	}
	id.Claims = claims
	id.Principal = id.Method + ":" + claims.Agent + ":" + claims.Subject + narrowDigest(claims)
	return id, a.checkAgent(id)
}

// verifyCredential checks token in the configured mode, sets id.Method, and returns the
// claims it carries: an API key's are the key's definition.
func (a *Authenticator) verifyCredential(ctx context.Context, token string, id *Identity) (*Claims, *Failure) {
	var claims *Claims
	var err error
	switch a.cfg.Auth.Mode {
	case "api_key":
		k, found := a.lookupKeyDef(token)
		if !found {
			return nil, a.unauthorized("invalid_credentials", "unknown API key")
		}
		claims = &Claims{Agent: k.Agent, Subject: "key:" + HashAPIKey(token)[:12], ReadOnly: k.ReadOnly, ConnectionScope: k.ConnectionScope}
		id.Method = "api_key"
	case "jwt":
		claims, err = a.jwt.Verify(token)
		id.Method = "jwt"
	case "oauth":
		claims, err = a.oauth.Verify(ctx, token)
		id.Method = "oauth"
	}
	if errors.Is(err, ErrKeysUnavailable) {
		return nil, &Failure{Status: http.StatusServiceUnavailable, Reason: "keys_unavailable",
			Message: "Service Unavailable: the authorization server's keys cannot be fetched"}
	}
	if err != nil {
		reason := err.Error()
		var te *TokenError
		if errors.As(err, &te) {
			reason = te.Reason
		}
		return nil, a.unauthorized("invalid_credentials", reason)
	}
	if claims.Agent == "" {
		return nil, a.unauthorized("invalid_credentials", "the credential names no agent")
	}
	return claims, nil
}

// contradicts refuses (403) identity headers that name another agent, task or conversation
// than the credential does.
func (a *Authenticator) contradicts(id *Identity, claims *Claims) *Failure {
	h := &a.hdr
	if id.Agent != "" && id.Agent != claims.Agent {
		return &Failure{Status: http.StatusForbidden, Reason: "identity_mismatch",
			Message: fmt.Sprintf("Forbidden: header %s %q contradicts the credential's agent %q", h.Agent, id.Agent, claims.Agent)}
	}
	if claims.Task != "" && id.Task != "" && id.Task != claims.Task {
		return &Failure{Status: http.StatusForbidden, Reason: "identity_mismatch",
			Message: fmt.Sprintf("Forbidden: header %s %q contradicts the credential's task %q", h.Task, id.Task, claims.Task)}
	}
	if claims.Conversation != "" && id.Conversation != "" && id.Conversation != claims.Conversation {
		return &Failure{Status: http.StatusForbidden, Reason: "identity_mismatch",
			Message: fmt.Sprintf("Forbidden: header %s %q contradicts the credential's conversation %q", h.Conversation, id.Conversation, claims.Conversation)}
	}
	return nil
}

// AdminScope is the JWT/OAuth scope that opens the admin API.
const AdminScope = "mcpgw:admin"

// Admin checks a bearer token for the admin API: an admin key from the key file, or a
// JWT (or OAuth token) carrying the mcpgw:admin scope. It names who the caller is, for the
// audit log; valid reports a credential that is good but not an admin's (an agent's key,
// a token without the scope). The admin token of the config is checked by the caller.
func (a *Authenticator) Admin(ctx context.Context, token string) (actor string, ok, valid bool) {
	if a.keys != nil {
		if id, ok := a.keys.LookupAdmin(token); ok {
			return "admin_key:" + id, true, true
		}
	}
	if _, agentKey := a.lookupKey(token); agentKey && a.cfg.Auth.Mode == "api_key" {
		return "", false, true
	}
	var claims *Claims
	var err error
	switch {
	case a.jwt != nil:
		claims, err = a.jwt.Verify(token)
	case a.oauth != nil:
		claims, err = a.oauth.Verify(ctx, token)
	default:
		return "", false, false
	}
	if err != nil || claims == nil {
		return "", false, false
	}
	if !slices.Contains(claims.Scopes, AdminScope) {
		return "", false, true
	}
	return "token:" + claims.Subject, true, true
}

func (a *Authenticator) lookupKey(key string) (string, bool) {
	k, ok := a.lookupKeyDef(key)
	return k.Agent, ok
}

// lookupKeyDef finds an agent key in the config or the key file, with its narrowing.
func (a *Authenticator) lookupKeyDef(key string) (config.APIKeyDef, bool) {
	if k, ok := a.staticKeys[HashAPIKey(key)]; ok {
		return k, true
	}
	if a.keys != nil {
		if r, ok := a.keys.LookupRecord(key); ok {
			return config.APIKeyDef{Agent: r.Agent, SHA256: r.SHA256, ID: r.ID, ReadOnly: r.ReadOnly, ConnectionScope: r.ConnectionScope}, true
		}
	}
	return config.APIKeyDef{}, false
}

// checkAgent refuses unknown agents (401) and disabled ones (403, unless
// auth.disabled_agent is "empty": then Resolve gives them no servers) once agents are
// defined.
func (a *Authenticator) checkAgent(id *Identity) *Failure {
	if len(a.cfg.Agents) == 0 || id.Agent == "" {
		return nil
	}
	ac, ok := a.cfg.Agents[id.Agent]
	if !ok {
		return a.unauthorized("unknown_agent", fmt.Sprintf("unknown agent %q", id.Agent))
	}
	if ac != nil && ac.Enabled != nil && !*ac.Enabled && a.cfg.Auth.DisabledAgent != "empty" {
		return &Failure{Status: http.StatusForbidden, Reason: "agent_disabled", Message: fmt.Sprintf("Forbidden: agent %q is disabled", id.Agent)}
	}
	return nil
}

// ErrNoAgent is returned when a request in mode none names no agent and agents are defined.
var ErrNoAgent = errors.New("no agent identity")

// NoAgent is the refusal for a request that names no agent while agents are defined.
func (a *Authenticator) NoAgent() *Failure {
	return a.unauthorized("no_credentials", "no agent identity: send the "+a.cfg.Auth.Headers.Agent+" header")
}

type trustedKey struct{}

// WithTrusted marks a request context as coming from a trusted local peer (the Unix
// socket, after its uid check): identity headers are believed as in mode none.
func WithTrusted(ctx context.Context) context.Context {
	return context.WithValue(ctx, trustedKey{}, true)
}

// Trusted reports whether ctx was marked by WithTrusted.
func Trusted(ctx context.Context) bool { v, _ := ctx.Value(trustedKey{}).(bool); return v }

// narrowDigest tells credentials of one subject apart by what they narrow: a token limited
// to some tools must not use a session opened by a broader token.
func narrowDigest(c *Claims) string {
	if c.Servers == nil && c.Tools == nil && !c.ReadOnly && c.Task == "" && c.Conversation == "" && c.ConnectionScope == nil {
		return ""
	}
	parts := []any{c.Servers, c.Tools, c.ReadOnly, c.Task, c.Conversation}
	if c.ConnectionScope != nil { // appended only when set: earlier principals stay as they were
		parts = append(parts, c.ConnectionScope)
	}
	b, _ := json.Marshal(parts)
	sum := sha256.Sum256(b)
	return "#" + hex.EncodeToString(sum[:6])
}

// HeaderValue is Header.Get without canonicalising a name that already is canonical (the
// common case: the defaults, and configured names are canonicalised at load), which
// Header.Get would allocate for on every request.
func HeaderValue(h http.Header, name string) string {
	if v := h[name]; len(v) > 0 {
		return v[0]
	}
	if c := http.CanonicalHeaderKey(name); c != name {
		if v := h[c]; len(v) > 0 {
			return v[0]
		}
	}
	return ""
}
