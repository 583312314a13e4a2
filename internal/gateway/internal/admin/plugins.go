package admin

import (
	"fmt"
	"net/http"

	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/plugin"
)

// PluginConn is one connection of a plugin as operators see it: what the provider reports
// (never the DSN, which may hold a password).
type PluginConn struct {
	ID          string `json:"id"`
	Name        string `json:"name,omitempty"`
	Status      string `json:"status"`
	Description string `json:"description,omitempty"`
}

// PluginRow is a plugin's status for /readyz and the admin API: the registry's status,
// the tools a session with every connection gets, and its connections.
type PluginRow struct {
	registry.PluginStatus
	Tools           int          `json:"tools"`
	ConnectionsList []PluginConn `json:"connection_list"`
	// Required: /readyz is 503 while the plugin is not up (plugins.<name>.required).
	Required       bool `json:"required"`
	ReadOnly       bool `json:"read_only"`
	DefaultEnabled bool `json:"default_enabled"`
}

// pluginAPI is the admin API's plugins (/api/plugins): list, read, restart. Plugins are
// defined in the config file only; the admin API shows them and does not edit them.
type pluginAPI struct{ port Port }

// pluginRows reports every plugin port runs, in name order.
func pluginRows(port Port) []PluginRow {
	out := []PluginRow{}
	for _, st := range port.PluginStatuses() {
		out = append(out, pluginRowOf(port, st))
	}
	return out
}

// pluginRowOf is the row of the plugin whose registry status is st.
func pluginRowOf(port Port, st registry.PluginStatus) PluginRow {
	row := PluginRow{PluginStatus: st, ConnectionsList: []PluginConn{}}
	p := port.Plugin(st.Name)
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
			row.ConnectionsList = append(row.ConnectionsList, PluginConn{ID: cn.ID, Name: cn.Name, Status: string(status), Description: cn.Description})
		}
	}
	return row
}

// ServePlugins lists the configured plugins with their state (plugins are defined in the
// config file only; the admin API shows them and does not edit them).
func (a pluginAPI) ServePlugins(w http.ResponseWriter, r *http.Request) {
	JSON(w, http.StatusOK, pluginRows(a.port))
}

func (a pluginAPI) ServePlugin(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	p := a.port.Plugin(name)
	if p == nil {
		Error(w, http.StatusNotFound, fmt.Sprintf("no plugin %q", name))
		return
	}
	JSON(w, http.StatusOK, pluginRowOf(a.port, p.Status()))
}

// ServeRestartPlugin restarts a plugin: a new one of the same definition replaces it
// (registry.RestartPlugin). Plugins are defined in the config file only, so there is no
// stop or start: a plugin stopped here would run again at the next reload, and one that
// must not run is removed from the file.
func (a pluginAPI) ServeRestartPlugin(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if a.port.Plugin(name) == nil {
		Error(w, http.StatusNotFound, fmt.Sprintf("no plugin %q", name))
		return
	}
	if err := a.port.RestartPlugin(name); err != nil {
		// A reload replaced or removed it meanwhile.
		Error(w, http.StatusConflict, err.Error())
		return
	}
	AuditWrite(a.port, r, "plugin/"+name, "ok", nil, nil)
	JSON(w, http.StatusAccepted, map[string]any{"restarted": name})
}

// pluginServerRow is a plugin as a row of GET /api/servers, next to the servers, so that
// an operator reading one list sees every source of tools: kind "plugin", where it comes
// from (the config file: plugins are defined there only), and as live what GET
// /api/plugins/{name} answers (state, since, error, restarts, tools, connections,
// resource_types). A server row's live has state, error, restarts and tools too, so a
// reader of those reads both kinds alike.
type pluginServerRow struct {
	Name           string    `json:"name"`
	Kind           string    `json:"kind"` // plugin
	Type           string    `json:"type"` // sql, go, command, mcpgw
	Enabled        bool      `json:"enabled"`
	DefaultEnabled bool      `json:"default_enabled"`
	Source         string    `json:"source"` // file
	File           string    `json:"file,omitempty"`
	Live           PluginRow `json:"live"`
}

// pluginServerRows are the plugins port runs as rows of GET /api/servers, in name order.
func pluginServerRows(port Port) []pluginServerRow {
	var out []pluginServerRow
	file := port.FileConfig().Path
	for _, row := range pluginRows(port) {
		out = append(out, pluginServerRow{Name: row.Name, Kind: KindPlugin, Type: row.Type, Enabled: true,
			DefaultEnabled: row.DefaultEnabled, Source: "file", File: file, Live: row})
	}
	return out
}

// The kinds of row GET /api/servers and GET /api/resolve answer.
const (
	KindServer = "server"
	KindPlugin = "plugin"
)
