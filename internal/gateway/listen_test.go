package gateway_test

import (
	"bufio"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway"
	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

// TestListenToldWhatUpstreamSaid: a stateless caller listening for tools/list_changed is
// told when its shared upstream says its tools changed, though the re-read lists the same
// tools (the everything-server's trigger adds a tool it added before): the upstream's word
// is passed on, as the upstream itself would to a listener.
func TestListenToldWhatUpstreamSaid(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.BaseConfig)
	trigger := func() {
		t.Helper()
		res := gatewaytest.StatelessResult(t, g.Do(t, gatewaytest.StatelessReq("tools/call", `{"name":"everything__test_trigger_tool_change",`+gatewaytest.StatelessMeta+`}`,
			map[string]string{"Mcp-Name": "everything__test_trigger_tool_change"})))
		if string(res["resultType"]) != `"complete"` {
			t.Fatalf("trigger: %v", res)
		}
	}
	before := 0
	if cat := g.Reg.Server("everything").Catalog(); cat != nil {
		before = len(cat.Tools)
	}
	trigger() // from now on the transient tool exists: the next trigger changes no list
	// Wait for the caller's own instance to re-read its lists with that tool: a listen opened
	// before would be told of a list that did change, and the test would pass without the
	// upstream's word passed on.
	deadline := time.Now().Add(5 * time.Second)
	for n := gateway.OwnToolCounts(g.Gateway, "everything"); len(n) != 1 || n[0] <= before; n = gateway.OwnToolCounts(g.Gateway, "everything") {
		if time.Now().After(deadline) {
			t.Fatalf("no session's own everything instance re-listed more than %d tools within 5s (%v)", before, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	r := gatewaytest.StatelessReq("subscriptions/listen", `{"notifications":{"toolsListChanged":true},`+gatewaytest.StatelessMeta+`}`, nil)
	hr, err := http.NewRequest(http.MethodPost, g.Base+"/mcp", strings.NewReader(r.Body))
	if err != nil {
		t.Fatal(err)
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range r.Header {
		hr.Header.Set(k, v)
	}
	resp, err := (&http.Client{}).Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	wait := func(what string) {
		t.Helper()
		deadline := time.After(5 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("the listen stream ended before %s", what)
				}
				if strings.Contains(l, what) {
					return
				}
			case <-deadline:
				t.Fatalf("no %s on the listen stream within 5s", what)
			}
		}
	}
	wait("notifications/subscriptions/acknowledged")
	trigger()
	wait("notifications/tools/list_changed")
}
