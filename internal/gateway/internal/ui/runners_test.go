package ui

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/mux"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/runners"
)

// executorsPort is fakePort with executors (none needed for the Runners table) and the
// runners GET /api/runners would list (nil: a gateway part that knows no runners).
type executorsPort struct {
	fakePort
	states []runners.State
}

func (p *executorsPort) ExecutorViews() ([]map[string]any, error) {
	return []map[string]any{{"id": "box", "source": "file"}}, nil
}
func (p *executorsPort) Config() *config.Config { return &config.Config{} }

// runnersExecutorsPort also knows the runners (the gateway's adminPort does).
type runnersExecutorsPort struct{ executorsPort }

func (p *runnersExecutorsPort) RunnerStates() any { return p.states }

func executorsPage(t *testing.T, port Port) string {
	t.Helper()
	u := New(port, "v-test", slog.New(slog.NewTextHandler(io.Discard, nil)))
	root := mux.NewRouter()
	root.NotFoundHandler = u.Mount(root, nil, []Page{{Path: "/ui/executors", Handler: http.HandlerFunc(u.ServeExecutors)}})
	w := do(root, "GET", "/ui/executors", nil, nil, nil)
	if w.Code != http.StatusOK {
		t.Fatalf("the Executors page: %d %s", w.Code, w.Body.String())
	}
	return w.Body.String()
}

// TestExecutorsPageRunners: the Executors page's Runners table has a row per runner of
// GET /api/runners: a connected one with its address, version, the servers it hosts (in
// order) and since when; one whose link ended with why (the runner's words are escaped,
// their invisible characters written out); one that never connected. Without runners
// (none configured, or a port that knows none) there is no table.
func TestExecutorsPageRunners(t *testing.T) {
	since := time.Date(2026, 11, 29, 17, 4, 5, 0, time.FixedZone("CET", 3600))
	port := &runnersExecutorsPort{executorsPort{fakePort: fakePort{open: true}, states: []runners.State{
		{Executor: "box", State: "connected", Address: "127.0.0.1:40122", Version: "v1.2.3", Since: since, Servers: []string{"fs", "git"}},
		{Executor: "ci", State: "disconnected", Address: "10.0.0.7:5000", Version: "<b>v9</b>\u202e", Since: since,
			Error: "runner link closed: <script>alert(1)</script>\u200b", Servers: []string{}},
		{Executor: "pod", State: "disconnected", Error: "no runner has connected", Servers: []string{}},
	}}}
	body := executorsPage(t, port)
	table := between(body, `id="runners-table"`, "</table>")
	if table == "" {
		t.Fatalf("no Runners table:\n%s", body)
	}
	box := between(table, `<tr data-executor="box">`, "</tr>")
	for _, want := range []string{">connected</span>", "127.0.0.1:40122", "v1.2.3", `data-col="servers">fs, git</td>`, "2026-11-29 16:04:05 UTC", `datetime="2026-11-29T16:04:05Z"`, `class="state state-up"`} {
		if !strings.Contains(box, want) {
			t.Errorf("box's row lacks %q: %s", want, box)
		}
	}
	ci := between(table, `<tr data-executor="ci">`, "</tr>")
	for _, want := range []string{">disconnected</span>", `class="state state-off"`, "runner link closed: &lt;script&gt;alert(1)&lt;/script&gt;", ">U&#43;200B<", "&lt;b&gt;v9&lt;/b&gt;", ">U&#43;202E<"} {
		if !strings.Contains(ci, want) {
			t.Errorf("ci's row lacks %q: %s", want, ci)
		}
	}
	if strings.Contains(body, "<script>alert") || strings.Contains(body, "<b>v9") || strings.ContainsAny(body, "\u202e\u200b") {
		t.Errorf("the page holds a runner's words raw")
	}
	pod := between(table, `<tr data-executor="pod">`, "</tr>")
	if !strings.Contains(pod, "no runner has connected") || strings.Contains(pod, "<time") {
		t.Errorf("pod's row (never connected): %s", pod)
	}
	if i, j, k := strings.Index(table, `"box"`), strings.Index(table, `"ci"`), strings.Index(table, `"pod"`); !(i < j && j < k) {
		t.Errorf("rows not in the order GET /api/runners gives")
	}

	// No runner configured: the hub lists none, and the page has no table.
	port.states = []runners.State{}
	if body := executorsPage(t, port); strings.Contains(body, `id="runners-table"`) {
		t.Errorf("a Runners table without runners")
	}
	// A port that knows no runners.
	if body := executorsPage(t, &executorsPort{fakePort: fakePort{open: true}}); strings.Contains(body, `id="runners-table"`) || !strings.Contains(body, `data-id="box"`) {
		t.Errorf("a port without runners: a table, or no executors")
	}
}
