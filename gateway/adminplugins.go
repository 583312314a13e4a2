package gateway

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/mcpgw/mcpgw/gateway/internal/admin"
	"github.com/mcpgw/mcpgw/plugin"
	"github.com/mcpgw/mcpgw/registry"
)

// pluginConn is one connection of a plugin as operators see it: what the provider reports
// (never the DSN, which may hold a password).
type pluginConn struct {
	ID          string `json:"id"`
	Name        string `json:"name,omitempty"`
	Status      string `json:"status"`
	Description string `json:"description,omitempty"`
}

// pluginRow is a plugin's status for /readyz and the admin API: the registry's status,
// the tools a session with every connection gets, and its connections.
type pluginRow struct {
	registry.PluginStatus
	Tools           int          `json:"tools"`
	ConnectionsList []pluginConn `json:"connection_list"`
	// Required: /readyz is 503 while the plugin is not up (plugins.<name>.required).
	Required       bool `json:"required"`
	ReadOnly       bool `json:"read_only"`
	DefaultEnabled bool `json:"default_enabled"`
}

// pluginRows reports every configured plugin, in name order.
func (g *Gateway) pluginRows() []pluginRow {
	out := []pluginRow{}
	for _, st := range g.reg.PluginStatuses() {
		out = append(out, g.pluginRowOf(st))
	}
	return out
}

func (g *Gateway) pluginRowOf(st registry.PluginStatus) pluginRow {
	row := pluginRow{PluginStatus: st, ConnectionsList: []pluginConn{}}
	p := g.reg.Plugin(st.Name)
	if p == nil {
		return row
	}
	row.Required, row.ReadOnly, row.DefaultEnabled = p.Def.Required, p.Def.ReadOnly, p.Def.Enabled()
	if cat := p.CatalogFor(registry.PluginScope{}, false); cat != nil {
		row.Tools = len(cat.Tools)
	}
	if c := p.Catalog(); c != nil {
		for _, cn := range c.Connections {
			status := cn.Status
			if status == "" {
				status = plugin.StatusConnected
			}
			row.ConnectionsList = append(row.ConnectionsList, pluginConn{ID: cn.ID, Name: cn.Name, Status: string(status), Description: cn.Description})
		}
	}
	return row
}

// apiPlugins lists the configured plugins with their state (plugins are defined in the
// config file only; the admin API shows them and does not edit them).
func (g *Gateway) apiPlugins(w http.ResponseWriter, r *http.Request) {
	admin.JSON(w, http.StatusOK, g.pluginRows())
}

func (g *Gateway) apiGetPlugin(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	p := g.reg.Plugin(name)
	if p == nil {
		admin.Error(w, http.StatusNotFound, fmt.Sprintf("no plugin %q", name))
		return
	}
	admin.JSON(w, http.StatusOK, g.pluginRowOf(p.Status()))
}

// apiRestartServer restarts a server (Gateway.RestartServer, which the mcpgw plugin's
// restart action runs too).
func (g *Gateway) apiRestartServer(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	err := g.RestartServer(name)
	switch {
	case errors.Is(err, registry.ErrNoServer):
		admin.Error(w, http.StatusNotFound, fmt.Sprintf("no server %q", name))
		return
	case errors.Is(err, registry.ErrRetired):
		admin.Error(w, http.StatusConflict, err.Error())
		return
	case err != nil:
		admin.Error(w, http.StatusInternalServerError, err.Error())
		return
	}
	g.auditAdmin(r, "server/"+name, "ok", nil, nil)
	admin.JSON(w, http.StatusAccepted, map[string]any{"restarted": name})
}
