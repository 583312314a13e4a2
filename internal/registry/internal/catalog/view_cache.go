package catalog

import (
	"encoding/base64"
	"errors"
	"strings"

	lru "github.com/hashicorp/golang-lru/v2"
)

// Cache keeps recently used views (and with them their pre-serialized list pages), by
// View.Key.
type Cache struct {
	c *lru.Cache[string, *View]
}

// NewCache is a cache of the size most recently used views.
func NewCache(size int) *Cache {
	c, _ := lru.New[string, *View](size)
	return &Cache{c: c}
}

// Get is the view cached under key, or nil.
func (vc *Cache) Get(key string) *View {
	v, _ := vc.c.Get(key)
	return v
}

// Put caches v under key.
func (vc *Cache) Put(key string, v *View) { vc.c.Add(key, v) }

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
