// Package ui is the gateway's web UI: sign-in, CSRF, headers, templates and static files,
// mounted on the admin router; the pages' data comes from handlers the gateway hands it.
package ui

import (
	"embed"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/admin"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/telemetry"
	"github.com/mcpgw/mcpgw/internal/store"
)

// The web UI (docs/ui.md): server-rendered pages under /ui, a little JavaScript under
// /ui/static, and the admin API's route table mounted again under /ui/api for those
// scripts. Everything is embedded; nothing is built to run it.

//go:embed templates/*.html static/*
var uiFiles embed.FS

// Port is what the UI needs of the running gateway: who may use it (admin.Guard: local
// trust, the admin credential check with its per-source back-off), and what its pages show.
type Port interface {
	admin.Guard
	// SessionRecords, SessionRecord, SessionRow and SessionView are the sessions as the
	// admin API reads them (admin.Port), for the Sessions pages.
	SessionRecords() ([]*store.Record, error)
	SessionRecord(id string) (*store.Record, error)
	SessionRow(rec *store.Record) admin.SessionRow
	SessionView(id string) (tools []admin.SessionTool, live bool)

	// ServerViews, AgentViews, ExecutorViews and AllTasks are what the admin API lists
	// (admin.API), for the Servers, Agents, Executors and Tasks pages.
	ServerViews() ([]admin.ServerView, error)
	AgentViews() ([]map[string]any, error)
	ExecutorViews() ([]map[string]any, error)
	AllTasks() ([]*store.Task, error)
	// ProjectViews are the projects as GET /api/projects lists them, for the Projects page.
	ProjectViews() ([]map[string]any, error)
	// PluginRows are the plugins as GET /api/plugins lists them, for the Plugins page.
	PluginRows() []admin.PluginRow
	// Skills are the skills the running servers list as GET /api/skills lists them (only
	// server's, when not empty), for the Servers page.
	Skills(server string) []admin.SkillRow
	// IntegrityRows are a page of the integrity records as GET /api/integrity lists them,
	// with how many are held per server, for the Integrity page; IntegrityWaiting is how
	// many definitions wait for a decision (held or warned), the count beside the page's
	// link.
	IntegrityRows(q admin.IntegrityQuery) (admin.IntegrityPage, error)
	IntegrityWaiting() int
	// Instances is how many instances of a server run now.
	Instances(server string) int64
	// Config is the running config.
	Config() *config.Config
	// Explain is what an agent (with a task and an executor) may see, tool by tool.
	Explain(agent, task, executor string) (view any, fail *auth.Failure)
	// UpstreamAuth is the registry's upstream authorization part (admin.Port's), for the
	// Upstream sign-in page.
	UpstreamAuth() admin.UpstreamAuth
	// Usage is the last window (at most an hour) of tool calls and tools/list tokens, for
	// the Usage page.
	Usage(window time.Duration) *telemetry.UsageReport
	// PeerUser names the local user at the far end of r's connection, where the OS tells
	// (a loopback peer on Linux): a UI session is honoured only from the user it began with.
	PeerUser(r *http.Request) (uid int, known bool)
}

// Route is an admin API route mounted again under /ui/api (its Path starts with /api).
type Route struct {
	Method, Path string
	Handler      http.Handler
}

// Page is one page of the UI: a GET handler under /ui.
type Page struct {
	Path    string
	Handler http.Handler
}

// UI is the web UI of one gateway: its pages (the gateway's page table names them), and
// the parts they share: the sign-in (signIn), the renderer, and the Upstream sign-in page.
type UI struct {
	port     Port
	view     *renderer
	signin   *signIn
	upstream upstreamPage
}

// New makes the UI of a gateway of the given version, logging template errors to log.
func New(port Port, version string, log *slog.Logger) *UI {
	view := &renderer{port: port, version: version, log: log}
	signin := &signIn{port: port, view: view}
	return &UI{port: port, view: view, signin: signin, upstream: upstreamPage{port: port, view: view, signin: signin}}
}

// uiCSP: no inline script or style, scripts and styles from this origin only (the only
// ones it serves are under /ui/static), no framing, forms post here only.
const uiCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: https:; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

func uiHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", uiCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	// same-origin, not no-referrer: with no-referrer a browser sends "Origin: null" on
	// form posts, which the Origin allow-list refuses.
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
}

// Mount adds the UI to the admin router root: its pages, its sign-in, its static files
// and the admin API's routes again under /ui/api behind the UI's sign-in; it returns the
// handler for paths under /ui that match no route.
func (u *UI) Mount(root *mux.Router, api []Route, pages []Page) http.Handler {
	static, _ := fs.Sub(uiFiles, "static")
	fileServer := http.StripPrefix("/ui/static/", http.FileServer(http.FS(static)))
	root.Handle("/ui", http.RedirectHandler("/ui/servers", http.StatusSeeOther)).Methods("GET", "HEAD")
	root.Handle("/ui/", http.RedirectHandler("/ui/servers", http.StatusSeeOther)).Methods("GET", "HEAD")
	root.PathPrefix("/ui/static/").Methods("GET", "HEAD").Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		uiHeaders(w)
		w.Header().Set("Cache-Control", "no-cache")
		fileServer.ServeHTTP(w, r)
	}))
	root.HandleFunc("/ui/login", u.signin.loginForm).Methods("GET", "HEAD")
	root.HandleFunc("/ui/login", u.signin.login).Methods("POST")
	root.Handle("/ui/logout", u.signin.guard(false, http.HandlerFunc(u.signin.logout))).Methods("POST")

	sub := root.PathPrefix("/ui/api").Subrouter()
	for _, rt := range api {
		sub.Handle(strings.TrimPrefix(rt.Path, "/api"), u.signin.guard(true, rt.Handler)).Methods(rt.Method)
	}
	for _, p := range pages {
		root.Handle(p.Path, u.signin.guard(false, p.Handler)).Methods("GET", "HEAD")
	}
	u.upstream.mount(root)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		uiHeaders(w)
		if strings.HasPrefix(r.URL.Path, "/ui/api/") {
			admin.Error(w, http.StatusNotFound, "no route "+r.Method+" "+r.URL.Path)
			return
		}
		u.view.Message(w, r, http.StatusNotFound, "Not found", "There is no page "+r.URL.Path+".")
	})
}
