// Package selfplugin is the mcpgw plugin: the gateway itself as a resource provider. Its
// resource types are the gateway's servers, sessions and agents (mcpgw::v1::Server,
// mcpgw::v1::Session, mcpgw::v1::Agent), listed and read through the generated get and
// list tools, with two Dangerous actions: restart on a Server and end on a Session.
//
// The package knows nothing of the gateway's types: the gateway implements Host and hands
// it to New. A Host shows only what an operator may show an agent it trusts: a session's
// id, agent, task, transport and times, never a credential; a server's state and counts,
// never its command, URL, headers or environment; an agent's rules, never its keys.
// docs/plugins.md describes how the plugin is enabled (only for agents that list it).
package selfplugin

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcpgw/mcpgw/plugin"
)

// The plugin's one connection, its resource group and its resource keys.
const (
	ConnectionID = "gateway"
	Group        = "mcpgw"
	KeyServer    = Group + plugin.KeySeparator + "v1" + plugin.KeySeparator + "Server"
	KeySession   = Group + plugin.KeySeparator + "v1" + plugin.KeySeparator + "Session"
	KeyAgent     = Group + plugin.KeySeparator + "v1" + plugin.KeySeparator + "Agent"
)

// Server is one configured upstream server as the plugin shows it.
type Server struct {
	Name        string    `json:"name"`
	Transport   string    `json:"transport"`
	Mode        string    `json:"mode"`
	State       string    `json:"state"`
	Error       string    `json:"error,omitempty"`
	Since       time.Time `json:"since"`
	Restarts    int       `json:"restarts"`
	Tools       int       `json:"tools"`
	Prompts     int       `json:"prompts"`
	Resources   int       `json:"resources"`
	Retired     bool      `json:"retired"`
	Source      string    `json:"source"` // file | api
	Title       string    `json:"title,omitempty"`
	Description string    `json:"description,omitempty"`
}

// Session is one session as the plugin shows it: no credential, no principal.
type Session struct {
	ID        string    `json:"id"`
	Agent     string    `json:"agent"`
	Task      string    `json:"task,omitempty"`
	Transport string    `json:"transport"`
	Created   time.Time `json:"created"`
	LastUsed  time.Time `json:"last_used"`
	Live      bool      `json:"live"` // live in this gateway process
	Tools     int       `json:"tools"`
	Calls     int64     `json:"calls"`
}

// Agent is one agent as the plugin shows it: its rules, not its keys.
type Agent struct {
	ID              string   `json:"id"`
	Enabled         bool     `json:"enabled"`
	Servers         []string `json:"servers"` // empty: every default-enabled server
	ReadOnly        bool     `json:"read_only"`
	ConnectionScope []string `json:"connection_scope,omitempty"`
	Executor        string   `json:"executor,omitempty"`
	ToolsAllow      []string `json:"tools_allow,omitempty"`
	ToolsDeny       []string `json:"tools_deny,omitempty"`
	Sessions        int      `json:"sessions"` // live sessions in this gateway process
	Source          string   `json:"source"`   // file | api
}

// Host is what the gateway gives the plugin. Errors reach the caller as the text of an
// isError result: they say what went wrong in the caller's terms.
type Host interface {
	Servers(ctx context.Context) ([]Server, error)
	Sessions(ctx context.Context) ([]Session, error)
	Agents(ctx context.Context) ([]Agent, error)
	// RestartServer restarts a server as the admin API's restart does.
	RestartServer(ctx context.Context, name string) error
	// EndSession ends a session as the admin API's DELETE does.
	EndSession(ctx context.Context, id string) error
}

// Plugin is the provider. It implements plugin.Plugin and plugin.ActionProvider.
type Plugin struct{ host Host }

// New returns the provider over a host.
func New(h Host) *Plugin { return &Plugin{host: h} }

var types = []plugin.ResourceType{
	{Key: KeyAgent, Description: "an agent of the gateway and its rules"},
	{Key: KeyServer, Description: "an upstream MCP server of the gateway and its state"},
	{Key: KeySession, Description: "a client session of the gateway"},
}

// ResourceTypes lists Server, Session and Agent.
func (p *Plugin) ResourceTypes(context.Context) ([]plugin.ResourceType, error) {
	return slices.Clone(types), nil
}

// Capabilities: every type can be read and listed; Server and Session have actions.
func (p *Plugin) Capabilities(_ context.Context, key string) (plugin.Capabilities, error) {
	switch key {
	case KeyServer, KeySession:
		return plugin.Capabilities{CanGet: true, CanList: true, HasSchema: true, HasActions: true}, nil
	case KeyAgent:
		return plugin.Capabilities{CanGet: true, CanList: true, HasSchema: true}, nil
	}
	return plugin.Capabilities{}, fmt.Errorf("resource type %q: %w", key, plugin.ErrNotFound)
}

// FilterFields: the types are not filterable (list and get only).
func (p *Plugin) FilterFields(context.Context, string, string) ([]plugin.FilterField, error) {
	return nil, plugin.ErrUnsupported
}

func checkConn(conn string) error {
	if conn != ConnectionID {
		return fmt.Errorf("connection %q: %w (the mcpgw plugin has one connection, %q)", conn, plugin.ErrNotFound, ConnectionID)
	}
	return nil
}

func str(desc string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Description: desc}
}

func integer(desc string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "integer", Description: desc}
}

func boolean(desc string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "boolean", Description: desc}
}

func timeField(desc string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Format: "date-time", Description: desc}
}

func stringList(desc string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "array", Items: &jsonschema.Schema{Type: "string"}, Description: desc}
}

// object builds an object schema whose properties keep the given order.
func object(required []string, props ...any) *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}, Required: required}
	for i := 0; i+1 < len(props); i += 2 {
		name := props[i].(string)
		s.Properties[name] = props[i+1].(*jsonschema.Schema)
		s.PropertyOrder = append(s.PropertyOrder, name)
	}
	return s
}

func schemaOf(key string) *jsonschema.Schema {
	switch key {
	case KeyServer:
		return object([]string{"name", "transport", "mode", "state", "since", "restarts", "tools", "prompts", "resources", "retired", "source"},
			"name", str("the server's name"),
			"transport", str("stdio, streamable_http or sse"),
			"mode", str("shared or per_session"),
			"state", str("starting, up, down or stopped"),
			"error", str("why the server is down, when it is"),
			"since", timeField("when the state began"),
			"restarts", integer("restarts since the gateway started"),
			"tools", integer("tools in its catalogue"),
			"prompts", integer("prompts in its catalogue"),
			"resources", integer("resources in its catalogue"),
			"retired", boolean("removed from the config; kept for the sessions that still use it"),
			"source", str("file (the config file) or api (the admin API)"),
			"title", str("meta.title"),
			"description", str("meta.description"))
	case KeySession:
		return object([]string{"id", "agent", "transport", "created", "last_used", "live", "tools", "calls"},
			"id", str("the session id"),
			"agent", str("the session's agent"),
			"task", str("the session's task"),
			"transport", str("streamable, sse or socket"),
			"created", timeField("when the session began"),
			"last_used", timeField("its last request"),
			"live", boolean("live in this gateway process"),
			"tools", integer("tools in its view"),
			"calls", integer("tool calls through this process"))
	case KeyAgent:
		return object([]string{"id", "enabled", "servers", "read_only", "sessions", "source"},
			"id", str("the agent id"),
			"enabled", boolean("false: the agent is refused"),
			"servers", stringList("the servers and plugins it lists (none: every default-enabled one)"),
			"read_only", boolean("only tools annotated readOnlyHint"),
			"connection_scope", stringList("the plugin connections it may use (absent: every one)"),
			"executor", str("its default executor policy"),
			"tools_allow", stringList("tools.allow globs"),
			"tools_deny", stringList("tools.deny globs"),
			"sessions", integer("its live sessions in this gateway process"),
			"source", str("file (the config file) or api (the admin API)"))
	}
	return nil
}

// ResourceSchema is the JSON Schema of a Server, Session or Agent.
func (p *Plugin) ResourceSchema(_ context.Context, conn, key string) (*jsonschema.Schema, error) {
	if err := checkConn(conn); err != nil {
		return nil, err
	}
	if s := schemaOf(key); s != nil {
		return s, nil
	}
	return nil, fmt.Errorf("resource type %q: %w", key, plugin.ErrNotFound)
}

// Connections: the gateway itself.
func (p *Plugin) Connections(context.Context) ([]plugin.Connection, error) {
	return []plugin.Connection{{ID: ConnectionID, Name: "this gateway", Status: plugin.StatusConnected,
		Description: "the mcpgw gateway serving this session"}}, nil
}

// Namespaces: none (the gateway's objects are not namespaced).
func (p *Plugin) Namespaces(_ context.Context, conn string) ([]string, error) {
	if err := checkConn(conn); err != nil {
		return nil, err
	}
	return []string{}, nil
}

// items reads every resource of a type, sorted by id.
func (p *Plugin) items(ctx context.Context, key string) ([]plugin.Resource, error) {
	var rows any
	var err error
	switch key {
	case KeyServer:
		var ss []Server
		ss, err = p.host.Servers(ctx)
		slices.SortFunc(ss, func(a, b Server) int { return cmp(a.Name, b.Name) })
		rows = ss
	case KeySession:
		var ss []Session
		ss, err = p.host.Sessions(ctx)
		slices.SortFunc(ss, func(a, b Session) int { return cmp(a.ID, b.ID) })
		rows = ss
	case KeyAgent:
		var as []Agent
		as, err = p.host.Agents(ctx)
		for i := range as {
			if as[i].Servers == nil {
				as[i].Servers = []string{}
			}
		}
		slices.SortFunc(as, func(a, b Agent) int { return cmp(a.ID, b.ID) })
		rows = as
	default:
		return nil, fmt.Errorf("resource type %q: %w", key, plugin.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(rows)
	if err != nil {
		return nil, err
	}
	var out []plugin.Resource
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}

func cmp(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func idOf(key string, r plugin.Resource) string {
	field := "id"
	if key == KeyServer {
		field = "name"
	}
	s, _ := r[field].(string)
	return s
}

func kindOf(key string) string {
	_, _, k, _ := plugin.SplitKey(key)
	return k
}

// Get reads one Server (by name), Session or Agent (by id).
func (p *Plugin) Get(ctx context.Context, conn, key string, in plugin.GetInput) (plugin.Resource, error) {
	if err := checkConn(conn); err != nil {
		return nil, err
	}
	all, err := p.items(ctx, key)
	if err != nil {
		return nil, err
	}
	for _, r := range all {
		if idOf(key, r) == in.ID {
			return r, nil
		}
	}
	return nil, fmt.Errorf("no %s %q: %w", kindOf(key), in.ID, plugin.ErrNotFound)
}

// defaultPage is the page size of a list that names none.
const defaultPage = 100

// List pages through a type in id order. The cursor is the offset of the next page.
func (p *Plugin) List(ctx context.Context, conn, key string, in plugin.ListInput) (plugin.Page, error) {
	if err := checkConn(conn); err != nil {
		return plugin.Page{}, err
	}
	if len(in.Namespaces) > 0 {
		return plugin.Page{}, fmt.Errorf("the mcpgw plugin has no namespaces; leave namespaces out")
	}
	all, err := p.items(ctx, key)
	if err != nil {
		return plugin.Page{}, err
	}
	start := 0
	if in.Cursor != "" {
		n, err := strconv.Atoi(in.Cursor)
		if err != nil || n < 0 || n > len(all) {
			return plugin.Page{}, fmt.Errorf("cursor %q is not one this tool gave", in.Cursor)
		}
		start = n
	}
	size := in.PageSize
	if size <= 0 {
		size = defaultPage
	}
	end := min(start+size, len(all))
	pg := plugin.Page{Items: all[start:end]}
	if pg.Items == nil {
		pg.Items = []plugin.Resource{}
	}
	if end < len(all) {
		pg.NextCursor = strconv.Itoa(end)
	}
	return pg, nil
}

// Find is not offered (the types are not filterable).
func (p *Plugin) Find(context.Context, string, string, plugin.FindInput) (plugin.Page, error) {
	return plugin.Page{}, plugin.ErrUnsupported
}

// Create is not offered: servers and agents are created through the admin API.
func (p *Plugin) Create(context.Context, string, string, plugin.CreateInput) (plugin.Resource, error) {
	return nil, plugin.ErrUnsupported
}

// Update is not offered.
func (p *Plugin) Update(context.Context, string, string, plugin.UpdateInput) (plugin.Resource, error) {
	return nil, plugin.ErrUnsupported
}

// Delete is not offered: a session is ended with the end action.
func (p *Plugin) Delete(context.Context, string, string, plugin.DeleteInput) (plugin.Resource, error) {
	return nil, plugin.ErrUnsupported
}

// Action ids.
const (
	ActionRestart = "restart"
	ActionEnd     = "end"
)

// Actions: restart on Server, end on Session; both Dangerous (confirmed by the user, and
// absent for read-only sessions).
func (p *Plugin) Actions(_ context.Context, conn, key string) ([]plugin.Action, error) {
	if err := checkConn(conn); err != nil {
		return nil, err
	}
	switch key {
	case KeyServer:
		return []plugin.Action{{ID: ActionRestart, Dangerous: true,
			Description:  "Restart the server: a new connection (or instance) replaces the old one; per-session instances stop and start again on their next call",
			OutputSchema: object([]string{"restarted"}, "restarted", str("the server restarted"))}}, nil
	case KeySession:
		return []plugin.Action{{ID: ActionEnd, Dangerous: true,
			Description:  "End the session: its instances stop and its client's next request gets 404",
			OutputSchema: object([]string{"ended"}, "ended", str("the session ended"))}}, nil
	case KeyAgent:
		return nil, nil
	}
	return nil, fmt.Errorf("resource type %q: %w", key, plugin.ErrNotFound)
}

// ExecuteAction runs restart or end through the host.
func (p *Plugin) ExecuteAction(ctx context.Context, conn, key, actionID string, in plugin.ActionInput) (plugin.ActionResult, error) {
	if err := checkConn(conn); err != nil {
		return plugin.ActionResult{}, err
	}
	if in.ID == "" {
		return plugin.ActionResult{}, fmt.Errorf("%s %s needs an id", kindOf(key), actionID)
	}
	switch {
	case key == KeyServer && actionID == ActionRestart:
		if err := p.host.RestartServer(ctx, in.ID); err != nil {
			return plugin.ActionResult{}, err
		}
		return plugin.ActionResult{Data: map[string]any{"restarted": in.ID}}, nil
	case key == KeySession && actionID == ActionEnd:
		if err := p.host.EndSession(ctx, in.ID); err != nil {
			return plugin.ActionResult{}, err
		}
		return plugin.ActionResult{Data: map[string]any{"ended": in.ID}}, nil
	}
	return plugin.ActionResult{}, fmt.Errorf("%s has no action %q: %w", kindOf(key), actionID, plugin.ErrNotFound)
}
