package oauth

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestScrub(t *testing.T) {
	got := scrub("token abcd1234 and\r\nnewline", "abcd1234", "ab") // too short a secret is left alone
	if got != "token [redacted] and  newline" {
		t.Errorf("scrub %q", got)
	}
	long := scrub(strings.Repeat("é", 300))
	if !utf8.ValidString(long) || len(long) > maxDescription+len("…") {
		t.Errorf("cut %d bytes, valid %v", len(long), utf8.ValidString(long))
	}
}

func TestErrorKinds(t *testing.T) {
	if NeedsUser(errors.New("x")) || NeedsUser(&AuthorizationError{Code: "server_error"}) {
		t.Error("NeedsUser for an error a person cannot fix")
	}
	for _, code := range []string{"access_denied", "consent_required", "login_required", "interaction_required"} {
		if !NeedsUser(fmt.Errorf("wrapped: %w", &AuthorizationError{Code: code})) {
			t.Errorf("%s does not need the user", code)
		}
	}
	if !NeedsUser(&TokenError{Code: "invalid_grant", grant: GrantRefreshToken}) {
		t.Error("dead refresh grant does not need the user")
	}
	if errors.Is(&TokenError{Code: "invalid_client", grant: GrantRefreshToken}, ErrGrantRevoked) {
		t.Error("invalid_client read as a dead grant")
	}
	me := &MismatchError{What: "iss", Want: "https://a"}
	if !strings.Contains(me.Error(), "missing") {
		t.Errorf("missing iss message %q", me)
	}
	me.Got = "https://b"
	if !strings.Contains(me.Error(), "https://b") {
		t.Errorf("mismatch message %q", me)
	}
}
