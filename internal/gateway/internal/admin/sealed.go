package admin

import (
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"strings"

	"github.com/mcpgw/mcpgw/internal/sealbox"
	"github.com/mcpgw/mcpgw/internal/store"
)

// SealedStore is the Store of the admin API's config entries with the values of API
// servers' env and headers sealed at rest (sealbox, the keys that seal upstream tokens),
// and opened again on every read: everything above it (the API, the merge into the
// running config) sees them in the clear, the store's bytes do not hold them. A value
// stored before sealing (in the clear) reads as it is and is sealed at its next write.
// With no Ring it is the Store as it is.
type SealedStore struct {
	Store
	Ring *sealbox.Ring
	// Log says which entry a value of could not be opened (zero: slog.Default()).
	Log *slog.Logger
}

// sealedPrefix marks a sealed value: the rest is base64 of sealbox's sealed bytes.
const sealedPrefix = "sealed:v1:"

// PutConfig stores e with its server's secret values sealed.
func (s SealedStore) PutConfig(e *store.ConfigEntry) error {
	if s.Ring == nil || e.Kind != kindServer {
		return s.Store.PutConfig(e)
	}
	c := *e
	doc, ok := s.mapSecrets(&c, func(field, k, v string) (string, bool) {
		if strings.HasPrefix(v, sealedPrefix) {
			return v, true
		}
		return sealedPrefix + base64.RawStdEncoding.EncodeToString(s.Ring.Seal([]byte(v), secretAAD(&c, field, k))), true
	})
	if !ok {
		return s.Store.PutConfig(e) // not a server document: stored as the API made it
	}
	c.Doc = doc
	return s.Store.PutConfig(&c)
}

// GetConfig reads one entry, its secret values opened.
func (s SealedStore) GetConfig(kind, name string) (*store.ConfigEntry, error) {
	e, err := s.Store.GetConfig(kind, name)
	if err != nil || s.Ring == nil {
		return e, err
	}
	return s.open(e), nil
}

// ListConfig reads every entry, secret values opened.
func (s SealedStore) ListConfig() ([]*store.ConfigEntry, error) {
	es, err := s.Store.ListConfig()
	if err != nil || s.Ring == nil {
		return es, err
	}
	out := make([]*store.ConfigEntry, len(es))
	for i, e := range es {
		out[i] = s.open(e)
	}
	return out, nil
}

// open is e with its sealed values opened. An entry with a value the keys in force
// cannot open is returned without a document (the merge skips it as unreadable), and
// the log says which and why.
func (s SealedStore) open(e *store.ConfigEntry) *store.ConfigEntry {
	if e == nil || e.Kind != kindServer || !strings.Contains(string(e.Doc), sealedPrefix) {
		return e
	}
	c := *e
	failed := ""
	doc, ok := s.mapSecrets(&c, func(field, k, v string) (string, bool) {
		rest, sealed := strings.CutPrefix(v, sealedPrefix)
		if !sealed {
			return v, true // stored in the clear, before sealing
		}
		b, err := base64.RawStdEncoding.DecodeString(rest)
		if err == nil {
			var plain []byte
			if plain, err = s.Ring.Open(b, secretAAD(&c, field, k)); err == nil {
				return string(plain), true
			}
		}
		failed = field + "." + k + ": " + err.Error()
		return "", false
	})
	if failed == "" && !ok {
		return e // not a server document: as stored
	}
	if failed != "" {
		log := s.Log
		if log == nil {
			log = slog.Default()
		}
		log.Error("an API server's sealed value cannot be opened with the keys in force: the server is skipped; give the keys it was sealed with (upstream_credentials.keys or "+
			"MCPGW_UPSTREAM_KEYS, or the state directory's upstream.key), or write the server again", "server", e.Name, "value", failed)
		c.Doc = nil
		return &c
	}
	c.Doc = doc
	return &c
}

// mapSecrets rewrites every value of the env and headers of a server document through f
// (field "env" or "headers", the key, the value). It reports false when the document is
// not a server document or f refused a value.
func (s SealedStore) mapSecrets(e *store.ConfigEntry, f func(field, k, v string) (string, bool)) (json.RawMessage, bool) {
	var d ServerDoc
	if json.Unmarshal(e.Doc, &d) != nil {
		return nil, false
	}
	for field, m := range map[string]map[string]string{"env": d.Env, "headers": d.Headers} {
		for k, v := range m {
			nv, ok := f(field, k, v)
			if !ok {
				return nil, false
			}
			m[k] = nv
		}
	}
	doc, err := json.Marshal(&d)
	return doc, err == nil
}

// secretAAD binds a sealed value to its place: a value moved to another server or key
// does not open.
func secretAAD(e *store.ConfigEntry, field, key string) []byte {
	return sealbox.AAD("config", e.Kind, e.Name, field, key)
}
