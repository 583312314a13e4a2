package gatewaytest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The tests here run the everything-server over stdio behind a shell pipeline that copies
// what the gateway writes to it (in.<pid>) and what it answers (out.<pid>), so that what
// reached the upstream, and in which order, is read from the upstream's side.
func LimitedConfig(t *testing.T, extra string) (yaml, dir string) {
	t.Helper()
	dir = t.TempDir()
	yaml = `
listen: {{listen}}
state_dir: {{state_dir}}
store: memory
log: {level: debug}
servers:
  slow:
    type: stdio
    command: sh
    args: ["-c", "tee \"$1/in.$$\" | \"$0\" | tee \"$1/out.$$\"", "` + EverythingBin() + `", "` + dir + `"]
` + extra
	return yaml, dir
}

// UpstreamLines are the lines of every in.* or out.* copy under dir.
func UpstreamLines(t *testing.T, dir, prefix string) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, prefix+".*"))
	var lines []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if l != "" {
				lines = append(lines, l)
			}
		}
	}
	return lines
}

// UpstreamLinesWith is upstreamLines once a line holding want is there: tee passes a line
// on to the upstream before it writes it to its file, so the upstream may have answered a
// request whose line the file does not hold yet. It waits at most 5 s.
func UpstreamLinesWith(t *testing.T, dir, prefix, want string) []string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		lines := UpstreamLines(t, dir, prefix)
		for _, l := range lines {
			if strings.Contains(l, want) {
				return lines
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s line holds %s within 5s: %q", prefix, want, lines)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// JSONUpstreamConfig is a config with one streamable HTTP server "j" at URL (replace it
// with the upstream's) and a call timeout of 400 ms.
const JSONUpstreamConfig = `
listen: {{listen}}
state_dir: {{state_dir}}
store: memory
log: {level: debug}
upstream: {call_timeout: 400ms}
servers:
  j:
    type: streamable_http
    url: URL
`

// startWordyUpstream serves 20 tools with long descriptions and schemas, so that their
// thin form is much smaller than the full one; it answers JSON bodies. Calls of tool1 fail
// with a JSON-RPC error; every other tool answers "done".
func startWordyUpstream(t *testing.T) string {
	t.Helper()
	var tools []string
	for i := range 20 {
		tools = append(tools, fmt.Sprintf(`{"name":"tool%d","description":%q,"inputSchema":{"type":"object","properties":{"path":{"type":"string","description":%q}}}}`,
			i, strings.Repeat("Does a careful thing with many words. ", 20), strings.Repeat("The path to read. ", 10)))
	}
	list := `{"tools":[` + strings.Join(tools, ",") + `]}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&m) != nil || len(m.ID) == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		result := `{}`
		switch m.Method {
		case "initialize":
			result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"wordy","version":"1"}}`
		case "tools/list":
			result = list
		case "tools/call":
			result = `{"content":[{"type":"text","text":"done"}]}`
			if m.Params.Name == "tool1" { // fails, for error counts
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32000,"message":"tool1 fails"}}`))
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + result + `}`))
	}))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv.URL + "/mcp"
}

// WordyAgents is a gateway config on the wordy upstream (server j) with agent af, whose
// sessions get full lists, and at, whose sessions get thin ones.
func WordyAgents(t *testing.T) *GW {
	t.Helper()
	return Start(t, strings.Replace(JSONUpstreamConfig, "URL", startWordyUpstream(t), 1)+`
agents:
  af: {servers: [j], handshake: full}
  at: {servers: [j], handshake: thin}
`)
}
