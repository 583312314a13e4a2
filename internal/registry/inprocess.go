package registry

import (
	"sync"

	"github.com/mcpgw/mcpgw/internal/upstream"
)

// ProvideServer gives the registry the server of servers.<name> of type inprocess: an MCP
// server the program embedding the gateway serves itself (upstream/inproc.go). The
// handler is the host's: the registry ends the connections it makes to it, never the
// handler. Call it before Start; a server of type inprocess without one is down, saying
// so.
func (r *Registry) ProvideServer(name string, s *upstream.InProcess) { r.inproc.put(name, s) }

// inProcServers are the servers of type inprocess the program gave, by server name.
type inProcServers struct {
	mu sync.Mutex
	m  map[string]*upstream.InProcess
}

func (p *inProcServers) put(name string, s *upstream.InProcess) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[string]*upstream.InProcess{}
	}
	p.m[name] = s
}

// get is the in-process server given under name, or nil.
func (p *inProcServers) get(name string) *upstream.InProcess {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.m[name]
}
