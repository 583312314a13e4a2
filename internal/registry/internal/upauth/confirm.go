package upauth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"net/url"
	"strings"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/store"
)

// A consent is bound to the identity that asked for it (docs/auth.md, "Who a consent is
// bound to"). The URL handed out is not the authorization server's but the gateway's
// consent page, and a confirmation code goes only to whoever started the authorization
// (the session whose call needed it, the admin API's caller). The page asks for the code;
// the browser that gives it gets a secret (a cookie) that the callback must present. So a
// link someone sends you, opened and approved in your browser, grants nothing: without the
// code the page goes no further, and an authorization server's URL taken from a confirmed
// page and sent on comes back to a callback without the cookie and is refused.

// Consent is an authorization a person is to give: the gateway's consent page to open and
// the code it asks for.
type Consent struct {
	URL  string `json:"url"`
	Code string `json:"code"`
}

// maxCodeTries wrong codes end a pending authorization: with 40 random bits in a code,
// guessing is hopeless.
const maxCodeTries = 5

// newCode is a confirmation code: 8 characters of base32 (40 bits), shown as XXXX-XXXX.
func newCode() string {
	t := rand.Text()[:8]
	return t[:4] + "-" + t[4:]
}

// digest is the hex SHA-256 of s: codes and binding secrets are kept only as digests.
func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// normalCode is code as a person may type it: case, spaces and dashes do not matter.
func normalCode(code string) string {
	code = strings.ToUpper(strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' {
			return -1
		}
		return r
	}, code))
	if len(code) == 8 {
		return code[:4] + "-" + code[4:]
	}
	return code
}

// consentPage is the gateway's consent page of the authorization whose state is state:
// the callback URL's, with the consent path in place of the callback path.
func (m *Manager) consentPage(state string) string {
	u, err := url.Parse(m.o.CallbackURL)
	if err != nil {
		return config.ConsentPath + state
	}
	u.Path, u.RawPath, u.RawQuery = config.ConsentPath+state, "", ""
	return u.String()
}

// consentError is an error of the consent page compared with errors.Is: a constant.
type consentError string

func (e consentError) Error() string { return string(e) }

// ErrConsentUnknown: no pending authorization has that state (never started, given,
// expired, or ended by wrong codes).
const ErrConsentUnknown consentError = "this authorization is unknown or expired: ask for a new one"

// Pending names whose grant at which server the pending authorization state is for.
func (m *Manager) Pending(state string) (Completed, error) {
	f, _, err := m.pendingFlow(state)
	if err != nil {
		return Completed{}, err
	}
	return Completed{Server: f.Server, Subject: f.Subject}, nil
}

func (m *Manager) pendingFlow(state string) (flow, *store.Credential, error) {
	var f flow
	if state == "" {
		return f, nil, ErrConsentUnknown
	}
	c, err := m.o.Store.GetCredential(kindFlow, flowServer, state)
	if errors.Is(err, store.ErrNotFound) {
		return f, nil, ErrConsentUnknown
	}
	if err != nil {
		return f, nil, err
	}
	if err := m.open(c, &f); err != nil {
		return f, nil, err
	}
	return f, c, nil
}

// Confirm checks the code a browser gave for the pending authorization state. The right
// code binds the authorization to that browser: the answer is the authorization server's
// URL to send it to and the secret it must hold at the callback (a later Confirm binds
// another browser instead). maxCodeTries wrong codes end the authorization.
func (m *Manager) Confirm(state, code string) (authURL, binding string, err error) {
	for range 3 {
		f, c, err := m.pendingFlow(state)
		if err != nil {
			return "", "", err
		}
		if subtle.ConstantTimeCompare([]byte(digest(normalCode(code))), []byte(f.CodeHash)) != 1 {
			f.Tries++
			if f.Tries >= maxCodeTries {
				_ = m.o.Store.DeleteCredential(kindFlow, flowServer, state)
				_ = m.o.Store.DeleteCredential(kindFlow, f.Server, f.Subject)
				return "", "", errors.New("wrong code too many times: this authorization is ended; ask for a new one")
			}
			if err := m.putFlow(state, f, c); errors.Is(err, store.ErrConflict) {
				continue
			}
			return "", "", errors.New("wrong code: enter the code that was given with this address")
		}
		binding = rand.Text()
		f.Bound = digest(binding)
		if err := m.putFlow(state, f, c); errors.Is(err, store.ErrConflict) {
			continue
		} else if err != nil {
			return "", "", err
		}
		return f.AuthURL, binding, nil
	}
	return "", "", store.ErrConflict
}

// putFlow writes f back over c, the record it was read from, keeping its expiry.
func (m *Manager) putFlow(state string, f flow, c *store.Credential) error {
	sealed, err := m.seal(kindFlow, flowServer, state, f)
	if err != nil {
		return err
	}
	_, err = m.o.Store.PutCredential(&store.Credential{Kind: kindFlow, Server: flowServer, Subject: state,
		Sealed: sealed, Expires: c.Expires, Updated: m.o.Now().UTC()}, c.Rev)
	return err
}

// bound reports whether binding is the secret of the browser f was confirmed in.
func (f *flow) bound(binding string) bool {
	return f.Bound != "" && binding != "" && subtle.ConstantTimeCompare([]byte(digest(binding)), []byte(f.Bound)) == 1
}
