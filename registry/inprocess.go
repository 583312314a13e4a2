package registry

import "github.com/mcpgw/mcpgw/internal/upstream"

// ProvideServer gives the registry the server of servers.<name> of type inprocess: an MCP
// server the program embedding the gateway serves itself (upstream/inproc.go). The
// handler is the host's: the registry ends the connections it makes to it, never the
// handler. Call it before Start; a server of type inprocess without one is down, saying
// so.
func (r *Registry) ProvideServer(name string, s *upstream.InProcess) {
	r.provMu.Lock()
	defer r.provMu.Unlock()
	if r.inproc == nil {
		r.inproc = map[string]*upstream.InProcess{}
	}
	r.inproc[name] = s
}

// inProcess is the in-process server given under name, or nil.
func (r *Registry) inProcess(name string) *upstream.InProcess {
	r.provMu.Lock()
	defer r.provMu.Unlock()
	return r.inproc[name]
}
