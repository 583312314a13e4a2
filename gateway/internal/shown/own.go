package shown

import (
	"maps"
	"sync"

	"github.com/mcpgw/mcpgw/registry"
)

// Own is what the session's own upstream instances put into its view: the servers whose
// instance is down for it, and the catalogues its instances (or its agent's) re-listed.
// Gen changes with each, so that a view built before is built again. The zero value is
// ready.
type Own struct {
	mu   sync.Mutex
	gen  uint64
	down map[string]bool
	cats map[string]*registry.Catalog
}

// SetDown notes whether server's instance is down for the session; changed is false when
// it already was so.
func (o *Own) SetDown(server string, down bool) (changed bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.down[server] == down {
		return false
	}
	if down {
		if o.down == nil {
			o.down = map[string]bool{}
		}
		o.down[server] = true
	} else {
		delete(o.down, server)
	}
	o.gen++
	return true
}

// SetCatalog takes server's re-listed catalogue into the session's view.
func (o *Own) SetCatalog(server string, cat *registry.Catalog) {
	o.mu.Lock()
	if o.cats == nil {
		o.cats = map[string]*registry.Catalog{}
	}
	o.cats[server] = cat
	o.gen++
	o.mu.Unlock()
}

// DropCatalogs forgets the catalogues of servers whose instances stopped.
func (o *Own) DropCatalogs(servers []string) {
	o.mu.Lock()
	for _, s := range servers {
		delete(o.cats, s)
	}
	o.mu.Unlock()
}

// Gen changes whenever what Own holds changes.
func (o *Own) Gen() uint64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.gen
}

// Snapshot is a copy of the servers down and the catalogues, for a view.
func (o *Own) Snapshot() (down map[string]bool, cats map[string]*registry.Catalog) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return maps.Clone(o.down), maps.Clone(o.cats)
}
