package e2e

// The sql plugin in the real bin/mcpgw, over a SQLite database created from the example's
// own seed (examples/shop.sql), used by go-sdk clients: find with two predicates and
// pagination, create, update and delete with "confirm": true, delete confirmed through
// elicitation, a read-only agent, a task that enables the plugin, SQL injection attempts.

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func pluginGateway(t *testing.T) *Gateway {
	t.Helper()
	seed := filepath.Join(e2eDir(t), "..", "..", "examples", "shop.sql")
	db := filepath.Join(t.TempDir(), "shop.db")
	return startGatewayChecked(t, `store: memory
log: {level: debug, format: text}
# Full lists: these tests reach the plugin's own checks, which a thin session's
# schema-on-error would answer first.
http: {handshake: full}
servers:
  everything:
    type: stdio
    command: {{everything_server}}
plugins:
  shop:
    type: sql
    connections:
      shop: {driver: sqlite, dsn: `+yamlQuote(db)+`, seed: `+yamlQuote(seed)+`}
agents:
  writer: {servers: [shop, everything]}
  reader: {servers: [shop], read_only: true}
  tasked: {}
tasks:
  only-shop: {enabled_mcp_servers: [shop]}
`)
}

func pluginClient(t *testing.T, g *Gateway, hdr map[string]string, edit func(*mcp.ClientOptions)) *goClient {
	t.Helper()
	return connectGoClientOpts(t, &mcp.StreamableClientTransport{Endpoint: g.URL, HTTPClient: httpClientWith(hdr)}, edit)
}

func callJSON(t *testing.T, gc *goClient, name string, args map[string]any) (*mcp.CallToolResult, map[string]any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := gc.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var out map[string]any
	if !res.IsError {
		if err := json.Unmarshal([]byte(resultText(res)), &out); err != nil {
			t.Fatalf("%s: result text is not JSON: %q", name, resultText(res))
		}
	}
	return res, out
}

func TestPluginSQLite(t *testing.T) {
	g := pluginGateway(t)
	w := pluginClient(t, g, map[string]string{"X-Agent-ID": "writer"}, nil)
	names := w.toolNames(t)
	for _, want := range []string{"shop_shop_v1_orders_find", "shop_shop_v1_customers_create", "shop_shop_v1_products_delete", "everything__test_simple_text"} {
		if !slices.Contains(names, want) {
			t.Fatalf("writer's tools lack %s: %v", want, names)
		}
	}

	// Orders still to ship (status new) of at least 1 item, two per page.
	var ids []string
	cursor := ""
	for page := 0; page < 10; page++ {
		args := map[string]any{"connectionId": "shop", "pageSize": 2, "filter": []any{
			map[string]any{"field": "status", "operator": "eq", "value": "new"},
			map[string]any{"field": "quantity", "operator": "gte", "value": 1},
		}}
		if cursor != "" {
			args["cursor"] = cursor
		}
		res, out := callJSON(t, w, "shop_shop_v1_orders_find", args)
		if res.IsError {
			t.Fatalf("find: %s", resultText(res))
		}
		items, _ := out["items"].([]any)
		if len(items) > 2 {
			t.Fatalf("a page of %d items, asked for 2", len(items))
		}
		for _, it := range items {
			ids = append(ids, fmt.Sprint(it.(map[string]any)["id"]))
		}
		if cursor, _ = out["nextCursor"].(string); cursor == "" {
			break
		}
	}
	if want := []string{"2", "5", "6"}; !slices.Equal(ids, want) {
		t.Errorf("orders new AND quantity>=1: ids %v, want %v", ids, want)
	}

	res, row := callJSON(t, w, "shop_shop_v1_customers_create", map[string]any{"connectionId": "shop", "name": "Dennis Ritchie", "country": "US"})
	if res.IsError {
		t.Fatalf("create: %s", resultText(res))
	}
	id := fmt.Sprint(row["id"])
	if res, row = callJSON(t, w, "shop_shop_v1_customers_update", map[string]any{"connectionId": "shop", "id": id, "vip": true}); res.IsError || row["vip"] != true {
		t.Fatalf("update: %s", resultText(res))
	}
	if res, _ = callJSON(t, w, "shop_shop_v1_customers_delete", map[string]any{"connectionId": "shop", "id": id}); !res.IsError {
		t.Fatalf("delete without confirm was not refused: %s", resultText(res))
	}
	if res, row = callJSON(t, w, "shop_shop_v1_customers_delete", map[string]any{"connectionId": "shop", "id": id, "confirm": true}); res.IsError || row["name"] != "Dennis Ritchie" {
		t.Fatalf("delete with confirm: %s", resultText(res))
	}

	// SQL injection attempts: refused, or matched as the plain values they are.
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"shop_shop_v1_customers_get", map[string]any{"connectionId": "shop", "id": "1 OR 1=1"}, "integer"},
		{"shop_shop_v1_customers_find", map[string]any{"connectionId": "shop", "filter": []any{map[string]any{"field": "name\" OR 1=1 --", "operator": "eq", "value": "x"}}}, "invalid arguments"},
		{"shop_shop_v1_customers_list", map[string]any{"connectionId": "shop", "namespaces": []any{"main; DROP TABLE customers"}}, ""},
		{"shop_shop_v1_products_get", map[string]any{"connectionId": "shop", "id": "KB-01' OR '1'='1"}, "not found"},
	} {
		res, out := callJSON(t, w, c.tool, c.args)
		if c.want == "" {
			if res.IsError {
				continue // refused is fine too
			}
			if items, _ := out["items"].([]any); len(items) != 0 {
				t.Errorf("%s %v: %d rows, want none", c.tool, c.args, len(items))
			}
			continue
		}
		if !res.IsError || !strings.Contains(resultText(res), c.want) {
			t.Errorf("%s %v: isError %v %q, want a refusal containing %q", c.tool, c.args, res.IsError, resultText(res), c.want)
		}
	}
	if res, out := callJSON(t, w, "shop_shop_v1_customers_count", map[string]any{"connectionId": "shop"}); res.IsError || fmt.Sprint(out["count"]) != "6" {
		t.Errorf("customers after the injection attempts: %s, want 6", resultText(res))
	}

	// A read-only agent sees no write tool, and nothing of servers it does not have.
	for _, n := range pluginClient(t, g, map[string]string{"X-Agent-ID": "reader"}, nil).toolNames(t) {
		if strings.HasSuffix(n, "_create") || strings.HasSuffix(n, "_update") || strings.HasSuffix(n, "_delete") || strings.HasSuffix(n, "_truncate") || strings.HasPrefix(n, "everything__") {
			t.Errorf("read-only agent sees %s", n)
		}
	}

	// A task that enables only the plugin.
	tasked := pluginClient(t, g, map[string]string{"X-Agent-ID": "tasked", "X-Task-ID": "only-shop"}, nil).toolNames(t)
	if !slices.Contains(tasked, "shop_shop_v1_orders_find") || slices.ContainsFunc(tasked, func(n string) bool { return strings.HasPrefix(n, "everything__") }) {
		t.Errorf("task enabling only shop: %v", tasked)
	}

	// A client that declared elicitation is asked instead; its answer decides.
	var mu sync.Mutex
	var asked []string
	answer := "decline"
	el := pluginClient(t, g, map[string]string{"X-Agent-ID": "writer"}, func(o *mcp.ClientOptions) {
		o.ElicitationHandler = func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, r.Params.Message)
			if answer == "accept" {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
			}
			return &mcp.ElicitResult{Action: answer}, nil
		}
	})
	if res, _ := callJSON(t, el, "shop_shop_v1_orders_delete", map[string]any{"connectionId": "shop", "id": "4"}); !res.IsError || !strings.Contains(resultText(res), "declined") {
		t.Fatalf("declined delete: %s", resultText(res))
	}
	mu.Lock()
	answer = "accept"
	mu.Unlock()
	if res, row := callJSON(t, el, "shop_shop_v1_orders_delete", map[string]any{"connectionId": "shop", "id": "4"}); res.IsError || row["status"] != "cancelled" {
		t.Fatalf("accepted delete: %s", resultText(res))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 2 || !strings.Contains(asked[0], "orders") {
		t.Errorf("elicitation messages: %q", asked)
	}
}
