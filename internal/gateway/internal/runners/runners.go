// Package runners is the gateway's side of executors' runners (mcpgw-bridge runner): it
// admits a runner's connection (GET /runner upgraded to the runner link, with a key bound
// to one executor), keeps one live link per executor, opens on it the stdio servers the
// sessions of that executor start (upstream.RunnerDialer), cuts off a runner whose key is
// revoked, and reports every runner's state for the admin API and the UI
// (docs/runners.md).
package runners

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/runnerlink"
	"github.com/mcpgw/mcpgw/internal/upstream"
)

// Path is where runners connect.
const Path = "/runner"

// ExecutorHeader names the executor a runner serves.
const ExecutorHeader = "Mcpgw-Executor"

// State is one executor's runner as the admin API shows it.
type State struct {
	Executor string    `json:"executor"`
	State    string    `json:"state"` // connected | disconnected
	Address  string    `json:"address,omitempty"`
	Version  string    `json:"version,omitempty"`
	Since    time.Time `json:"since"`
	Servers  []string  `json:"servers"`
	Error    string    `json:"error,omitempty"`
}

// runner is one executor's runner: its live link, or why the last one ended.
type runner struct {
	link    *runnerlink.Link
	key     string // the key it presented, checked again on every reload
	addr    string
	version string
	since   time.Time
	lastErr string
}

// Hub holds the runners of a gateway's executors.
type Hub struct {
	log *slog.Logger
	// cfg is the running config (executors and their runner keys).
	cfg func() *config.Config
	// maxMessage bounds one frame (upstream.max_message_bytes).
	maxMessage int

	mu   sync.Mutex
	runs map[string]*runner

	// OnConnect, if set, is called (on a goroutine of its own) when an executor's runner
	// has connected: the sessions whose instances on it are down start them again.
	OnConnect func(executor string)

	// Signins, if set, slows wrong runner keys per source (signin.go); set it before the
	// hub serves.
	Signins Signins
}

// New makes the hub of a gateway whose running config cfg returns.
func New(cfg func() *config.Config, maxMessage int, log *slog.Logger) *Hub {
	return &Hub{log: log, cfg: cfg, maxMessage: maxMessage, runs: map[string]*runner{}}
}

// bearer is the credential of an Authorization: Bearer header.
func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

// refuse answers a runner that may not connect. Whether the executor exists is not said:
// an unknown executor and a wrong key get the same answer.
func refuse(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Connection", "close")
	w.WriteHeader(status)
	fmt.Fprintf(w, "{\"error\":%q}\n", msg)
}

// ServeHTTP admits a runner: GET with Upgrade: mcpgw-runner/1, the executor it serves in
// Mcpgw-Executor, and one of that executor's runner keys as its bearer token.
func (h *Hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		refuse(w, http.StatusMethodNotAllowed, "a runner connects with GET and Upgrade: "+runnerlink.Protocol)
		return
	}
	if !strings.EqualFold(r.Header.Get("Upgrade"), runnerlink.Protocol) {
		refuse(w, http.StatusUpgradeRequired, "Upgrade: "+runnerlink.Protocol+" required")
		return
	}
	executor := r.Header.Get(ExecutorHeader)
	ex := h.cfg().Executors[executor]
	key := bearer(r)
	if key != "" && h.slowed(w, r) {
		return // checked not at all while its source waits after wrong keys (signin.go)
	}
	ok := executor != "" && ex.RunnerKeyOK(key)
	if key != "" {
		h.keyChecked(r, ok)
	}
	if !ok {
		h.log.Warn("runner refused", "executor", executor, "remote", r.RemoteAddr)
		refuse(w, http.StatusUnauthorized, "runner credential refused for this executor")
		return
	}
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		refuse(w, http.StatusInternalServerError, "cannot take over the connection: "+err.Error())
		return
	}
	if brw.Reader.Buffered() > 0 {
		// The runner speaks only after the 101.
		conn.Close()
		return
	}
	_ = conn.SetDeadline(time.Time{})
	_, err = brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: " + runnerlink.Protocol + "\r\nConnection: Upgrade\r\n\r\n")
	if err == nil {
		err = brw.Flush()
	}
	if err != nil {
		conn.Close()
		return
	}
	link := runnerlink.NewLink(conn, h.maxMessage)
	h.attach(executor, &runner{link: link, key: key, addr: r.RemoteAddr, version: r.Header.Get("User-Agent"), since: time.Now()})
	go func() {
		err := link.Run()
		h.detach(executor, link, err)
	}()
	if h.OnConnect != nil {
		go h.OnConnect(executor)
	}
}

// attach makes run the executor's runner; a runner already there is cut off (the new
// connection is the one its runner made after losing the old).
func (h *Hub) attach(executor string, run *runner) {
	h.mu.Lock()
	old := h.runs[executor]
	h.runs[executor] = run
	h.mu.Unlock()
	if old != nil && old.link != nil {
		old.link.Close(errors.New("replaced by a new connection of the executor's runner"))
	}
	h.log.Info("runner connected", "executor", executor, "remote", run.addr)
}

// detach records that link ended, unless a newer link replaced it.
func (h *Hub) detach(executor string, link *runnerlink.Link, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	run := h.runs[executor]
	if run == nil || run.link != link {
		return
	}
	msg := "disconnected"
	if err != nil {
		msg = err.Error()
	}
	h.runs[executor] = &runner{addr: run.addr, version: run.version, since: time.Now(), lastErr: msg}
	h.log.Warn("runner disconnected", "executor", executor, "err", msg)
}

// Revalidate cuts off the runners whose executor is gone, has no runner any more, or no
// longer accepts the key they presented (a reload revoked it).
func (h *Hub) Revalidate(cfg *config.Config) {
	h.mu.Lock()
	var cut []*runnerlink.Link
	for name, run := range h.runs {
		if run.link == nil {
			if !cfg.Executors[name].HasRunner() {
				delete(h.runs, name)
			}
			continue
		}
		if !cfg.Executors[name].RunnerKeyOK(run.key) {
			cut = append(cut, run.link)
		}
	}
	h.mu.Unlock()
	for _, l := range cut {
		l.Close(errors.New("the runner's key was revoked"))
	}
}

// Close cuts off every runner.
func (h *Hub) Close() {
	h.mu.Lock()
	var links []*runnerlink.Link
	for _, run := range h.runs {
		if run.link != nil {
			links = append(links, run.link)
		}
	}
	h.mu.Unlock()
	for _, l := range links {
		l.Close(errors.New("the gateway is shutting down"))
	}
}

// OpenOnRunner starts sp on executor's runner (upstream.RunnerDialer). With no runner
// connected it fails at once, naming the executor: the instance is down until the runner
// comes back and the registry's back-off starts it again.
func (h *Hub) OpenOnRunner(ctx context.Context, executor string, sp upstream.RunnerServer, deliver func([]byte), stderr func(string)) (upstream.RunnerStream, error) {
	h.mu.Lock()
	run := h.runs[executor]
	h.mu.Unlock()
	if run == nil || run.link == nil {
		why := "no runner has connected"
		if run != nil && run.lastErr != "" {
			why = "its runner is disconnected (" + run.lastErr + ")"
		}
		return nil, fmt.Errorf("executor %q: %s", executor, why)
	}
	spec := runnerlink.Spec{Name: sp.Name, Command: sp.Command, Args: sp.Args, Env: sp.Env, Dir: sp.Dir}
	st, err := run.link.Open(ctx, spec, deliver, stderr)
	if err != nil {
		return nil, err
	}
	return st, nil
}

// States are every executor's runner, configured or connected, by executor name.
func (h *Hub) States() []State {
	cfg := h.cfg()
	h.mu.Lock()
	out := make([]State, 0, len(h.runs))
	seen := map[string]bool{}
	for name, run := range h.runs {
		seen[name] = true
		st := State{Executor: name, State: "disconnected", Address: run.addr, Version: run.version, Since: run.since, Error: run.lastErr, Servers: []string{}}
		if run.link != nil {
			st.State = "connected"
			st.Servers = run.link.Streams()
			slices.Sort(st.Servers)
		}
		out = append(out, st)
	}
	h.mu.Unlock()
	for name, ex := range cfg.Executors {
		if ex.HasRunner() && !seen[name] {
			out = append(out, State{Executor: name, State: "disconnected", Error: "no runner has connected", Servers: []string{}})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Executor < out[j].Executor })
	return out
}
