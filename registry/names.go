package registry

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/mcpgw/mcpgw/config"
)

// ExposedName turns an upstream's tool or prompt name into the name clients see:
// {server}{sep}{name} (prefix always) or name (prefix never), restricted to
// ^[A-Za-z0-9_-]{1,max}$. A name that is too long or has other characters is rewritten and
// given a stable hash suffix; the catalogue keeps the mapping back.
func ExposedName(server, name string, n config.Naming) string {
	full := name
	if n.Prefix != "never" {
		full = server + n.Separator + name
	}
	max := n.MaxLength
	if max <= 0 {
		max = 64
	}
	clean := true
	for i := 0; i < len(full); i++ {
		if !nameByte(full[i]) {
			clean = false
			break
		}
	}
	if clean && len(full) >= 1 && len(full) <= max {
		return full
	}
	var b strings.Builder
	for i := 0; i < len(full); i++ {
		c := full[i]
		if nameByte(c) {
			b.WriteByte(c)
		} else {
			b.WriteByte('_')
		}
	}
	sum := sha256.Sum256([]byte(server + "\x00" + name))
	suffix := "_" + hex.EncodeToString(sum[:4])
	s := b.String()
	if len(s)+len(suffix) > max {
		s = s[:max-len(suffix)]
	}
	return s + suffix
}

func nameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}
