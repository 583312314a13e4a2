package stateless

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

var info = json.RawMessage(`{"name":"mcpgw"}`)

func members(t *testing.T, b []byte) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return m
}

func TestResult(t *testing.T) {
	r := members(t, Result("tools/list", json.RawMessage(`{"tools":[]}`), info, "private"))
	if string(r["resultType"]) != `"complete"` || string(r["ttlMs"]) != "60000" || string(r["cacheScope"]) != `"private"` {
		t.Errorf("list result: %v", r)
	}
	if !strings.Contains(string(r["_meta"]), `"io.modelcontextprotocol/serverInfo":{"name":"mcpgw"}`) {
		t.Errorf("no serverInfo in _meta: %s", r["_meta"])
	}
	// What an upstream said stays: its own ttl, scope, result type and serverInfo.
	r = members(t, Result("tools/list", json.RawMessage(`{"tools":[],"ttlMs":5,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up"}}}`), info, "private"))
	if string(r["ttlMs"]) != "5" || string(r["cacheScope"]) != `"public"` || !strings.Contains(string(r["_meta"]), `"up"`) {
		t.Errorf("upstream's hints replaced: %v", r)
	}
	r = members(t, Result("tools/call", json.RawMessage(`{"inputRequests":{"a":{}}}`), info, "public"))
	if string(r["resultType"]) != `"input_required"` || r["ttlMs"] != nil {
		t.Errorf("input rounds result: %v", r)
	}
	if r := members(t, Result("resources/read", json.RawMessage(`{"contents":[]}`), info, "public")); string(r["ttlMs"]) != "0" {
		t.Errorf("resources/read ttl %s, want 0", r["ttlMs"])
	}
}

func TestReply(t *testing.T) {
	cases := []struct {
		msg    string
		status int
		want   string
	}{
		{`{"jsonrpc":"2.0","id":9,"result":{"content":[]}}`, 200, `"id":1,"result":{"content":[],"resultType":"complete"`},
		{`{"jsonrpc":"2.0","id":9,"error":{"code":-32002,"message":"gone"}}`, 200, `"code":-32602`},
		{`{"jsonrpc":"2.0","id":9,"error":{"code":-32601,"message":"no"}}`, 404, `"code":-32601`},
		{`{"jsonrpc":"2.0","id":9,"error":{"code":-32020,"message":"hm"}}`, 400, `"code":-32020`},
		{`{"jsonrpc":"2.0","id":9,"error":{"code":-1,"message":"x"}}`, 200, `"code":-1`},
		{`not json`, 200, `"code":-32603`},
	}
	for _, c := range cases {
		got, status := Reply("tools/call", json.RawMessage(`1`), []byte(c.msg), info, "public")
		if status != c.status || !strings.Contains(string(got), c.want) {
			t.Errorf("Reply(%s) = %d %s, want %d with %s", c.msg, status, got, c.status, c.want)
		}
	}
}

func TestOut(t *testing.T) {
	w := httptest.NewRecorder()
	o := NewOut(w, false)
	o.Final([]byte(`{"a":1}`), http.StatusOK)
	if w.Header().Get("Content-Type") != "application/json" || w.Body.String() != `{"a":1}` || o.Streaming() {
		t.Errorf("plain answer: %q %q", w.Header().Get("Content-Type"), w.Body.String())
	}
	w = httptest.NewRecorder()
	o = NewOut(w, false)
	if err := o.Notify([]byte(`{"n":1}`)); err != nil {
		t.Fatal(err)
	}
	o.Final([]byte(`{"a":1}`), http.StatusOK)
	if w.Header().Get("Content-Type") != "text/event-stream" || !o.Streaming() || strings.Count(w.Body.String(), "event: message") != 2 {
		t.Errorf("a notification first makes a stream: %q %q", w.Header().Get("Content-Type"), w.Body.String())
	}
	w = httptest.NewRecorder()
	NewOut(w, true).Final([]byte(`{"a":1}`), http.StatusOK)
	if w.Header().Get("Content-Type") != "text/event-stream" {
		t.Errorf("a client that prefers a stream gets %q", w.Header().Get("Content-Type"))
	}
	w = httptest.NewRecorder()
	NewOut(w, true).Final([]byte(`{"e":1}`), http.StatusBadRequest)
	if w.Code != http.StatusBadRequest || w.Header().Get("Content-Type") != "application/json" {
		t.Errorf("an error status stays JSON: %d %q", w.Code, w.Header().Get("Content-Type"))
	}
}
