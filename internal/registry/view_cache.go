package registry

import (
	"encoding/base64"
	"errors"
	"strings"

	lru "github.com/hashicorp/golang-lru/v2"
)

// viewCache keeps recently used views (and with them their pre-serialized list pages).
type viewCache struct {
	c *lru.Cache[string, *View]
}

func newViewCache(size int) *viewCache {
	c, _ := lru.New[string, *View](size)
	return &viewCache{c: c}
}

func (vc *viewCache) get(key string) *View {
	v, _ := vc.c.Get(key)
	return v
}

func (vc *viewCache) put(key string, v *View) { vc.c.Add(key, v) }

// Cursors are opaque to clients: base64url of the list kind and the last item's key. They
// stay valid while that item is in the view.
func encodeCursor(kind, last string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(kind + "\x01" + last))
}

var errBadCursor = errors.New("invalid cursor")

func decodeCursor(kind, cursor string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return "", errBadCursor
	}
	k, last, ok := strings.Cut(string(b), "\x01")
	if !ok || k != kind {
		return "", errBadCursor
	}
	return last, nil
}
