package oauth

import (
	"errors"
	"fmt"
	"strings"
)

// sentinel is an error that is a constant: the package keeps no variables, and errors.Is
// compares these by value.
type sentinel string

func (s sentinel) Error() string { return string(s) }

const (
	// ErrNoResourceMetadata: no protected-resource metadata at any of the URLs tried. The
	// server predates RFC 9728 (MCP 2025-03-26); Discover falls back for it.
	ErrNoResourceMetadata = sentinel("oauth: no protected resource metadata found")
	// ErrNoServerMetadata: no authorization-server metadata at any of the URLs tried.
	ErrNoServerMetadata = sentinel("oauth: no authorization server metadata found")
	// ErrBodyTooLarge: a response was larger than Client.MaxBody.
	ErrBodyTooLarge = sentinel("oauth: response body too large")
	// ErrNoRegistration: the server offers no way for this client to register (no
	// pre-registered client, no client ID metadata document support, no registration
	// endpoint); a person must register the client by hand.
	ErrNoRegistration = sentinel("oauth: no way to register a client with the authorization server")
	// ErrPKCEUnsupported: the server's metadata does not list S256; MCP clients must not
	// proceed without PKCE.
	ErrPKCEUnsupported = sentinel("oauth: authorization server does not support PKCE S256")
	// ErrStateMismatch: the callback's state is not the pending flow's (a forged or stale
	// callback).
	ErrStateMismatch = sentinel("oauth: callback state does not match the pending authorization")
	// ErrStepUpLimit: insufficient_scope again after the allowed re-authorizations, or a
	// challenge that asks for nothing new.
	ErrStepUpLimit = sentinel("oauth: scope step-up limit reached")
	// ErrGrantRevoked: the token endpoint answered invalid_grant to a refresh: the grant is
	// gone and the user must authorize again. Test with errors.Is on a *TokenError.
	ErrGrantRevoked = sentinel("oauth: grant revoked or expired; authorization required")
)

// MismatchError: a document names something other than what the client asked for: the
// protected resource metadata's resource is not the server's, the authorization server
// metadata's issuer is not the one its URL was built from, or a callback's iss is not the
// issuer's. The client must not use the document (or the code).
type MismatchError struct {
	What string // "resource", "issuer" or "iss"
	Want string // what the client expected
	Got  string // what the document said ("" when missing)
}

func (e *MismatchError) Error() string {
	if e.Got == "" {
		return fmt.Sprintf("oauth: %s missing, want %q", e.What, e.Want)
	}
	return fmt.Sprintf("oauth: %s mismatch: got %q, want %q", e.What, e.Got, e.Want)
}

// AuthorizationError is an error answer at the redirect URI (RFC 6749 §4.1.2.1), such as
// access_denied when the user declined or consent_required, login_required and
// interaction_required when the server needs the user.
type AuthorizationError struct {
	Code        string
	Description string
}

func (e *AuthorizationError) Error() string {
	if e.Description == "" {
		return "oauth: authorization failed: " + e.Code
	}
	return "oauth: authorization failed: " + e.Code + ": " + e.Description
}

// NeedsUser reports whether err means a person must go through the authorization endpoint
// (again): consent refused or required, login required, or a grant that is gone.
func NeedsUser(err error) bool {
	if errors.Is(err, ErrGrantRevoked) {
		return true
	}
	var ae *AuthorizationError
	if errors.As(err, &ae) {
		switch ae.Code {
		case "access_denied", "consent_required", "login_required", "interaction_required":
			return true
		}
	}
	return false
}

// TokenError is an error answer of a token endpoint (RFC 6749 §5.2) or a registration
// endpoint (RFC 7591 §3.2.2). Its description is the server's, cut short and scrubbed of
// anything the request sent as a secret.
type TokenError struct {
	Endpoint    string // "token" or "registration"
	Status      int
	Code        string // invalid_grant, invalid_client, ...; "" when the body was not an error object
	Description string
	grant       string // the grant type asked for, to tell a dead refresh token
}

func (e *TokenError) Error() string {
	msg := fmt.Sprintf("oauth: %s endpoint answered %d", e.Endpoint, e.Status)
	if e.Code != "" {
		msg += " " + e.Code
	}
	if e.Description != "" {
		msg += ": " + e.Description
	}
	return msg
}

// Is makes errors.Is(err, ErrGrantRevoked) true for invalid_grant to a refresh.
func (e *TokenError) Is(target error) bool {
	return target == ErrGrantRevoked && e.Code == "invalid_grant" && e.grant == "refresh_token"
}

// InsufficientScopeError is a 403 insufficient_scope the caller may answer by stepping up
// (StepUp) or must give up on.
type InsufficientScopeError struct {
	Scopes []string // what the challenge asked for
}

func (e *InsufficientScopeError) Error() string {
	return "oauth: insufficient scope; server asks for " + strings.Join(e.Scopes, " ")
}

// maxDescription bounds a server-supplied description kept in an error.
const maxDescription = 200

// scrub cuts a server-supplied text short, drops control characters and blanks out any
// secret the request carried, so an error never repeats a token, code or secret.
func scrub(s string, secrets ...string) string {
	for _, sec := range secrets {
		if len(sec) >= 4 {
			s = strings.ReplaceAll(s, sec, "[redacted]")
		}
	}
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	if len(s) > maxDescription {
		s = strings.ToValidUTF8(s[:maxDescription], "") + "…"
	}
	return s
}
