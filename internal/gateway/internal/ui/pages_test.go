package ui

import (
	"html"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/gorilla/mux"

	"github.com/mcpgw/mcpgw/config"
)

// agentsPort is fakePort with agents: one from the API with a search form and pinned
// tools, one from the file.
type agentsPort struct{ fakePort }

func (p *agentsPort) AgentViews() ([]map[string]any, error) {
	return []map[string]any{
		{"id": "bot", "source": "api", "handshake": "search", "pinned_tools": []string{"gh__get_*", "gh__create_issue"}},
		{"id": "filed", "source": "file"},
	}, nil
}
func (p *agentsPort) Config() *config.Config {
	return &config.Config{Servers: map[string]*config.ServerDef{"gh": {}}}
}

// TestAgentsPageFormAndPinnedTools: the Agents page offers every form, the gateway's
// default first, and a pinned-tools field, both named as the agent document's keys (the
// page's script reads them from the document and saves them through PUT /api/agents).
func TestAgentsPageFormAndPinnedTools(t *testing.T) {
	port := &agentsPort{fakePort{open: true}}
	u := New(port, "v-test", slog.New(slog.NewTextHandler(io.Discard, nil)))
	root := mux.NewRouter()
	root.NotFoundHandler = u.Mount(root, nil, []Page{{Path: "/ui/agents", Handler: http.HandlerFunc(u.ServeAgents)}})
	w := do(root, "GET", "/ui/agents", nil, nil, nil)
	body := w.Body.String()
	if w.Code != http.StatusOK {
		t.Fatalf("the Agents page: %d %s", w.Code, body)
	}
	form := between(body, `data-id="bot"`, "</form>")
	sel := between(form, `name="handshake"`, "</select>")
	var values []string
	for _, part := range strings.Split(sel, `<option value="`)[1:] {
		v, _, _ := strings.Cut(part, `"`)
		values = append(values, v)
	}
	if strings.Join(values, ",") != ",auto,full,thin,search" {
		t.Errorf("the form select offers %q, want the gateway's default, then auto, full, thin, search", values)
	}
	if !strings.Contains(form, `<textarea id="pin-bot" name="pinned_tools"`) || !strings.Contains(form, `data-error-for="pinned_tools"`) {
		t.Errorf("no pinned-tools field with its error slot in:\n%s", form)
	}
	doc := html.UnescapeString(between(body, `data-doc="`, `"`))
	if !strings.Contains(doc, `"pinned_tools":["gh__get_*","gh__create_issue"]`) || !strings.Contains(doc, `"handshake":"search"`) {
		t.Errorf("the agent's document, which the script fills the form from: %s", doc)
	}
	// The file's agent: the same controls, disabled with the rest of its fieldset.
	filed := between(body, `data-id="filed"`, "</form>")
	if !strings.Contains(filed, `name="handshake"`) || !strings.Contains(filed, "<fieldset disabled>") {
		t.Errorf("the file's agent:\n%s", filed)
	}
}
