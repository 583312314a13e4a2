package gatewaytest

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/statedir"
)

// WaitToolsOf lists a session's tools until there is one (bounded: the view's servers
// start in the background), and returns the last list.
func WaitToolsOf(t *testing.T, g *GW, sid string) []string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		names := g.ToolNames(t, sid)
		if len(names) > 0 || time.Now().After(deadline) {
			return names
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// Warnings are the answer's warnings as field: message strings.
func (a APIAnswer) Warnings() []string {
	var b struct {
		Warnings []struct{ Field, Message string }
	}
	_ = json.Unmarshal(a.Raw, &b)
	var out []string
	for _, e := range b.Warnings {
		out = append(out, e.Field+": "+e.Message)
	}
	return out
}

// AdminYAML is the admin API tests' starting config: the shared everything-server as
// server "everything", and nothing else set.
const AdminYAML = `
listen: {{listen}}
state_dir: {{state_dir}}
log: {level: debug}
servers:
  everything:
    type: streamable_http
    url: {{everything}}
`

// APIAnswer is one admin API answer, its body decoded.
type APIAnswer struct {
	Status int
	Header http.Header
	Raw    []byte
	Obj    map[string]any
}

// String is the answer's status and body, for failure messages.
func (a APIAnswer) String() string { return http.StatusText(a.Status) + " " + string(a.Raw) }

// FieldErrors are the answer's errors as field: message strings.
func (a APIAnswer) FieldErrors() []string {
	var b struct {
		Errors []struct{ Field, Message string }
	}
	_ = json.Unmarshal(a.Raw, &b)
	var out []string
	for _, e := range b.Errors {
		out = append(out, e.Field+": "+e.Message)
	}
	return out
}

// API sends one admin API request (hdr: extra headers, e.g. LocalAuth) and reads the
// answer's JSON object, if any.
func (g *GW) API(t *testing.T, method, path, body string, hdr map[string]string) APIAnswer {
	t.Helper()
	r := g.Do(t, Req{Method: method, Path: path, Body: body, Header: hdr})
	a := APIAnswer{Status: r.Status, Header: r.Header, Raw: r.Body}
	_ = json.Unmarshal(r.Body, &a.Obj)
	return a
}

// LocalAuth is the header with the gateway's local token, as the CLI sends it: an admin
// credential, which writes that start commands need.
func (g *GW) LocalAuth(t *testing.T) map[string]string {
	t.Helper()
	tok, err := statedir.ReadToken(g.Gateway.FileConfig().StateDir)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{"Authorization": "Bearer " + tok}
}

// WaitLive polls GET /api/servers/{name} until its live state is want (bounded).
func WaitLive(t *testing.T, g *GW, name, want string) APIAnswer {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		a := g.API(t, "GET", "/api/servers/"+name, "", nil)
		live, _ := a.Obj["live"].(map[string]any)
		if a.Status == http.StatusOK && live != nil && live["state"] == want {
			return a
		}
		if time.Now().After(deadline) {
			t.Fatalf("server %s not %s within 15 s: %s", name, want, a)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// WaitAudit reads the audit log until done says it holds what the test waits for (the
// writer flushes every 200 ms), bounded.
func WaitAudit(t *testing.T, path string, done func([]map[string]any) bool) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var ls []map[string]any
		if f, err := os.Open(path); err == nil {
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				var l map[string]any
				if json.Unmarshal(sc.Bytes(), &l) == nil {
					ls = append(ls, l)
				}
			}
			f.Close()
		}
		if done(ls) {
			return ls
		}
		if time.Now().After(deadline) {
			t.Fatalf("audit log %s: not complete within 10 s: %v", path, ls)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
