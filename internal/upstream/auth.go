package upstream

import (
	"context"
	"errors"
	"fmt"
	"net/http"
)

// Authorizer is who holds the token an upstream's requests carry.
type Authorizer interface {
	// Header is the Authorization value of the next request ("": none yet; the
	// upstream's refusal then says what it wants); an error fails the request with it.
	Header(ctx context.Context) (string, error)
	// Refused tells that the upstream answered status (401 or 403) with challenge to the
	// value sent. nil: send once more with Header's new value; else the request fails
	// with the error (which says what a person must do).
	Refused(ctx context.Context, sent string, status int, challenge http.Header) error
}

// sendAuthorized POSTs one message with the authorizer's Authorization header.
func (t *streamTransport) sendAuthorized(ctx context.Context, msg []byte, rel *Call) error {
	// An upstream that refuses the token is told once more, with the token its
	// authorizer gives after the refusal (another call may have renewed it meanwhile).
	for attempt := 0; ; attempt++ {
		authz, err := t.auth.Header(ctx)
		if err != nil {
			return &AuthError{Err: err}
		}
		err = t.post(ctx, msg, rel, authz)
		var ref *refused
		if !errors.As(err, &ref) {
			return err
		}
		if err := t.auth.Refused(ctx, authz, ref.status, http.Header{"Www-Authenticate": ref.challenges}); err != nil || attempt == 1 {
			if err == nil {
				err = fmt.Errorf("upstream refused its renewed token too (HTTP %d)", ref.status)
			}
			return &AuthError{Err: err}
		}
	}
}

// refused is a POST the upstream answered 401 or 403 while mcpgw is its OAuth client.
type refused struct {
	status     int
	challenges []string
}

func (e *refused) Error() string {
	return fmt.Sprintf("upstream refused the token (HTTP %d)", e.status)
}

// AuthError is a request that failed for want of a token the upstream takes: the
// authorizer had none to give, or the upstream refused the one it gave. Err says what a
// person must do. No other request to the upstream can succeed until then, so a dial
// that meets one ends at once.
type AuthError struct{ Err error }

func (e *AuthError) Error() string { return e.Err.Error() }
func (e *AuthError) Unwrap() error { return e.Err }
