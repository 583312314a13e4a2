package stateless

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"strings"

	"github.com/mcpgw/mcpgw/internal/wire"
)

// ParkedPrefix marks the requestState of a call the gateway parked while its client
// answers an input request.
const ParkedPrefix = "mcpgw-s"

// NewParkedState names a parked call: unguessable, and marked as the gateway's own.
func NewParkedState() string { return ParkedPrefix + rand.Text() }

// upstreamPrefix marks a requestState that wraps an upstream's own (an upstream that
// returned input_required itself): "mcpgw-u." + base64url(state) + "." + MAC.
const upstreamPrefix = "mcpgw-u."

// Sealer wraps the requestState of an upstream's own input_required result. The MAC binds
// the state to the caller's gateway-side session, so a client can neither alter an
// upstream's state nor replay another caller's. Its key is random per gateway: a restart
// invalidates the states it sealed, and the client then starts its request again.
type Sealer struct{ key []byte }

// NewSealer returns a sealer with a fresh random key.
func NewSealer() *Sealer {
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	return &Sealer{key: k}
}

func (s *Sealer) mac(session, state string) string {
	h := hmac.New(sha256.New, s.key)
	h.Write([]byte(session))
	h.Write([]byte{0})
	h.Write([]byte(state))
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// Seal wraps the requestState of an input_required result in the response msg for the
// session named session; any other message comes back as it was.
func (s *Sealer) Seal(session string, msg []byte) []byte {
	if !bytes.Contains(msg, []byte(`"input_required"`)) {
		return msg
	}
	var resp wire.Msg
	if wire.ParseInto(msg, &resp) != nil || resp.Result == nil {
		return msg
	}
	var out wire.Object
	sealed := false
	_ = wire.MembersRaw(resp.Result, func(k, v []byte) error {
		if string(k) == "requestState" {
			if st, ok := wire.String(v); ok {
				out.Str("requestState", upstreamPrefix+base64.RawURLEncoding.EncodeToString([]byte(st))+"."+s.mac(session, st))
				sealed = true
				return nil
			}
		}
		out.Raw(string(k), v)
		return nil
	})
	if !sealed {
		return msg
	}
	return wire.Result(resp.ID, out.Bytes())
}

// Open unwraps a requestState the sealer made for session. wrapped reports whether state
// is a sealed upstream state at all; valid, whether it is intact and this session's.
func (s *Sealer) Open(session, state string) (upstream string, wrapped, valid bool) {
	sealed, ok := strings.CutPrefix(state, upstreamPrefix)
	if !ok {
		return "", false, false
	}
	enc, mac, ok := strings.Cut(sealed, ".")
	if !ok {
		return "", true, false
	}
	b, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil || !hmac.Equal([]byte(mac), []byte(s.mac(session, string(b)))) {
		return "", true, false
	}
	return string(b), true, true
}
