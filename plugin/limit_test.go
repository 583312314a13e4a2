package plugin_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/plugin"
)

// TestResultLimit: a result larger than CallOptions.Limit is an isError result that names
// the limit, its setting and the plugin, for a get and a list alike; a result within it is
// served whole. (Plugin results used to have no bound at all: a 200 MB resource became a
// 419 MB answer, through 3 GB of the gateway's memory.)
func TestResultLimit(t *testing.T) {
	c, _ := loadFixture(t)
	ts := c.Tools(plugin.Options{Name: gatewayNames})
	big := strings.Repeat("x", 1<<20)
	if r := call(t, ts, "kubernetes_apps_v1_Deployment_create", `{"connectionId":"prod","name":"huge","image":"`+big+`"}`, plugin.CallOptions{}); r.IsError {
		t.Fatalf("create without a limit: %s", text(r))
	}
	lim := plugin.CallOptions{Limit: plugin.ResultLimit{Bytes: 64 << 10, Setting: "upstream.max_message_bytes"}}
	for _, tc := range []struct{ tool, args string }{
		{"kubernetes_apps_v1_Deployment_get", `{"connectionId":"prod","id":"huge"}`},
		{"kubernetes_apps_v1_Deployment_list", `{"connectionId":"prod"}`},
	} {
		r := call(t, ts, tc.tool, tc.args, lim)
		wantRefused(t, nil, r, "65536 bytes", "upstream.max_message_bytes", "plugin kubernetes")
	}
	// Within the limit: the whole resource, and the same bytes as without a limit.
	r := call(t, ts, "kubernetes_apps_v1_Deployment_get", `{"connectionId":"prod","id":"web"}`, lim)
	if r.IsError || !strings.Contains(text(r), `"nginx:1.27"`) {
		t.Errorf("a small get under the limit: %s", text(r))
	}
	// A limit that only the written result passes (its JSON is under half the limit, the
	// result with it twice is not) is refused too.
	b, _ := json.Marshal(map[string]any{"image": big})
	edge := plugin.CallOptions{Limit: plugin.ResultLimit{Bytes: len(b) + len(b)/2}}
	wantRefused(t, nil, call(t, ts, "kubernetes_apps_v1_Deployment_get", `{"connectionId":"prod","id":"huge"}`, edge), "larger than")
}

// TestJSONSizeAtLeast: the size walk is a lower bound of the written JSON's length, exact
// for plain strings, and it stops early.
func TestJSONSizeAtLeast(t *testing.T) {
	values := []any{
		map[string]any{"a": "plain", "b": []any{int64(1), 2.5, nil, true}, "c": map[string]any{"d": []byte("bytes")}},
		map[string]any{"esc": "quote \" and <tag> and \u2028", "n": json.Number("12345678901234567890")},
		[]any{"x", "y"},
		"plain string",
	}
	for _, v := range values {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if plugin.JSONSizeAtLeast(v, len(b)+1) {
			t.Errorf("%s: the walk counts more than the %d bytes written", b, len(b))
		}
	}
	if s := "plain string"; !plugin.JSONSizeAtLeast(s, len(s)+2) {
		t.Errorf("a plain string's size is not exact")
	}
	huge := map[string]any{"v": strings.Repeat("x", 100)}
	if !plugin.JSONSizeAtLeast(huge, 50) || plugin.JSONSizeAtLeast(huge, 1000) {
		t.Errorf("JSONSizeAtLeast of a 100-byte value: wrong side of 50 or 1000")
	}
}
