package admin

import (
	"context"
	"maps"
	"net/http"
	"time"
)

// probeTimeout bounds a "test connection" when the server sets no connect timeout.
const probeTimeout = 30 * time.Second

// ServeTestServer checks a server body as POST /api/servers would (the name may exist: an
// edit is tested too) and then connects to it once, answering the tools it would add.
// A server that cannot be reached is a 200 with ok false and the error: the test ran.
func (a serverAPI) ServeTestServer(w http.ResponseWriter, r *http.Request) {
	body, ok := ReadBody(w, r)
	if !ok {
		return
	}
	b, ok := readServerBody(w, body, "")
	if !ok {
		return
	}
	doc := b.ServerDoc
	// Secrets sent back as the redaction marker take the stored server's values.
	var curEnv, curHeaders map[string]string
	if cur, err := a.findServer(b.Name); err == nil {
		if cur.doc != nil {
			curEnv, curHeaders = cur.doc.Env, cur.doc.Headers
		} else {
			curEnv, curHeaders = cur.def.Env, cur.def.Headers
		}
	}
	for _, u := range []struct {
		next, cur map[string]string
		field     string
	}{{doc.Env, curEnv, "env"}, {doc.Headers, curHeaders, "headers"}} {
		if fe := unredact(u.next, u.cur, u.field); fe != nil {
			FieldErrors(w, http.StatusBadRequest, fe.WithField(), []FieldError{*fe}, nil)
			return
		}
	}
	def, ferrs := doc.def("servers." + b.Name + ".")
	cfg := *a.port.Config()
	cfg.Servers = maps.Clone(cfg.Servers)
	cfg.ApplyServerDefaults(def)
	cfg.Servers[b.Name] = def
	errs, warns := problemsFor(cfg.Validate(), "servers."+b.Name)
	errs = append(ferrs, errs...)
	if len(errs) > 0 {
		FieldErrors(w, http.StatusBadRequest, "the config would be invalid: "+errs[0].WithField(), errs, warns)
		return
	}
	if def.Command != "" && !MayRunCommands(a.port, w, r, []string{"servers." + b.Name + " (test)"}) {
		return
	}
	timeout := def.Timeouts.Connect
	if timeout <= 0 || timeout > probeTimeout {
		timeout = probeTimeout
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	start := time.Now()
	cat, err := a.port.Probe(ctx, b.Name, def)
	ms := time.Since(start).Milliseconds()
	if err != nil {
		JSON(w, http.StatusOK, map[string]any{"ok": false, "error": err.Error(), "ms": ms, "warnings": nonNil(warns)})
		return
	}
	tools := []SessionTool{}
	for _, t := range cat.Tools {
		tools = append(tools, SessionTool{Name: t.Exposed, Server: b.Name, Tool: t.Name})
	}
	JSON(w, http.StatusOK, map[string]any{"ok": true, "tools": tools, "prompts": len(cat.Prompts),
		"resources": len(cat.Resources) + len(cat.Templates), "problems": nonNil(cat.Problems), "ms": ms, "warnings": nonNil(warns)})
}
