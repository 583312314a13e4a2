package oauth

import "slices"

// OfflineAccess is the scope that asks for a refresh token (OpenID Connect; SEP-2207).
const OfflineAccess = "offline_access"

// DefaultMaxStepUps bounds re-authorizations for insufficient_scope on one request: a
// server that keeps asking must not keep a user (or a loop) busy.
const DefaultMaxStepUps = 2

// SelectScopes is the MCP scope selection strategy: the challenge's scope, else the
// protected resource metadata's scopes_supported, else none (leave the parameter out).
// With offline set, offline_access is added when, and only when, the authorization server
// lists it in scopes_supported (SEP-2207).
func SelectScopes(ch Challenge, prm *ResourceMetadata, as *ServerMetadata, offline bool) []string {
	scopes := ch.Scopes()
	if len(scopes) == 0 && prm != nil {
		scopes = slices.Clone(prm.ScopesSupported)
	}
	if offline && as != nil && slices.Contains(as.ScopesSupported, OfflineAccess) && !slices.Contains(scopes, OfflineAccess) {
		scopes = append(scopes, OfflineAccess)
	}
	return scopes
}

// StepUp answers a 403 insufficient_scope challenge (MCP scope challenge handling): the
// scopes to authorize again with, the union of those asked for before and those the
// challenge names (SEP-2350). done is the number of step-ups already made for the request;
// after max of them (DefaultMaxStepUps when max <= 0), or when the challenge asks for
// nothing not already asked for, it returns an *InsufficientScopeError wrapping
// ErrStepUpLimit: give up on the request.
func StepUp(previous []string, ch Challenge, done, max int) ([]string, error) {
	if max <= 0 {
		max = DefaultMaxStepUps
	}
	want := ch.Scopes()
	union := slices.Clone(previous)
	for _, s := range want {
		if !slices.Contains(union, s) {
			union = append(union, s)
		}
	}
	if done >= max || len(union) == len(previous) {
		return nil, &stepUpLimit{InsufficientScopeError{Scopes: want}}
	}
	return union, nil
}

// stepUpLimit is an InsufficientScopeError that is also ErrStepUpLimit.
type stepUpLimit struct{ InsufficientScopeError }

func (e *stepUpLimit) Error() string {
	return ErrStepUpLimit.Error() + ": " + e.InsufficientScopeError.Error()
}

func (e *stepUpLimit) Unwrap() []error { return []error{ErrStepUpLimit, &e.InsufficientScopeError} }
