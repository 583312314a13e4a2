package sessionview

import (
	"maps"
	"slices"
	"sync"

	"github.com/mcpgw/mcpgw/internal/registry"
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
	// awaited are the servers whose catalogues the session's lists waited for (Unawaited).
	awaited map[string]bool
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

// DropCatalogs forgets the catalogues of servers whose instances stopped (and that the
// session waited for them).
func (o *Own) DropCatalogs(servers []string) {
	o.mu.Lock()
	for _, s := range servers {
		delete(o.cats, s)
		delete(o.awaited, s)
	}
	o.mu.Unlock()
}

// Unawaited are those of servers (the session's set) whose catalogues the session's lists
// have not waited for; a server that left the set is forgotten, so that it is waited for
// again if it comes back.
func (o *Own) Unawaited(servers []string) []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	for s := range o.awaited {
		if !slices.Contains(servers, s) {
			delete(o.awaited, s)
		}
	}
	var out []string
	for _, s := range servers {
		if !o.awaited[s] {
			out = append(out, s)
		}
	}
	return out
}

// Awaited notes that the session's lists waited for the catalogues of servers.
func (o *Own) Awaited(servers []string) {
	o.mu.Lock()
	if o.awaited == nil {
		o.awaited = map[string]bool{}
	}
	for _, s := range servers {
		o.awaited[s] = true
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
