package listenstream

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/wire"
)

func recv(l *Listener) string {
	select {
	case m := <-l.C:
		return string(m)
	default:
		return ""
	}
}

// TestSend: each listener gets what it opted in to, tagged with its own subscription id
// beside the notification's own _meta; requests and request-scoped notifications go to
// none; a listener that falls behind is closed, never waited for.
func TestSend(t *testing.T) {
	var set Set
	tools := New(json.RawMessage(`1`), Filter{ToolsListChanged: true})
	res := New(json.RawMessage(`"r"`), Filter{ResourceSubscriptions: []string{"file:///a"}})
	set.Add(tools)
	set.Add(res)
	_ = set.Send(wire.Notification("notifications/tools/list_changed", json.RawMessage(`{"_meta":{"k":"v"}}`)))
	if got := recv(tools); !strings.Contains(got, `"io.modelcontextprotocol/subscriptionId":1`) || !strings.Contains(got, `"k":"v"`) {
		t.Errorf("tools listener: %s", got)
	}
	if got := recv(res); got != "" {
		t.Errorf("the resource listener got a tools change: %s", got)
	}
	_ = set.Send(wire.Notification("notifications/resources/updated", json.RawMessage(`{"uri":"file:///a"}`)))
	_ = set.Send(wire.Notification("notifications/resources/updated", json.RawMessage(`{"uri":"file:///b"}`)))
	if got := recv(res); !strings.Contains(got, `file:///a`) || !strings.Contains(got, `"io.modelcontextprotocol/subscriptionId":"r"`) {
		t.Errorf("resource listener: %s", got)
	}
	if got := recv(res); got != "" {
		t.Errorf("an unsubscribed URI reached the listener: %s", got)
	}
	_ = set.Send(wire.Notification("notifications/progress", json.RawMessage(`{"progressToken":1}`)))
	_ = set.Send([]byte(`{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage"}`))
	if got := recv(tools) + recv(res); got != "" {
		t.Errorf("request-scoped messages reached listeners: %s", got)
	}
	for range queue + 1 {
		_ = set.Send(wire.Notification("notifications/tools/list_changed", nil))
	}
	select {
	case <-tools.Done():
	default:
		t.Error("a listener that fell behind is still open")
	}
	set.Remove(res)
	_ = set.Send(wire.Notification("notifications/resources/updated", json.RawMessage(`{"uri":"file:///a"}`)))
	if got := recv(res); got != "" {
		t.Errorf("a removed listener got %s", got)
	}
}

// TestFlushSaid: what an upstream said is told once, unless the view comparison already
// sent it; an empty filter is empty.
func TestFlushSaid(t *testing.T) {
	var set Set
	l := New(json.RawMessage(`7`), Filter{ToolsListChanged: true, PromptsListChanged: true})
	set.Add(l)
	set.Said("notifications/tools/list_changed")
	set.Said("notifications/prompts/list_changed")
	set.FlushSaid(true, false) // tools were sent by the comparison
	if got := recv(l); !strings.Contains(got, "prompts/list_changed") {
		t.Errorf("flushed: %s", got)
	}
	if got := recv(l); got != "" {
		t.Errorf("flushed twice or the sent one again: %s", got)
	}
	set.FlushSaid(false, false)
	if got := recv(l); got != "" {
		t.Errorf("a second flush told again: %s", got)
	}
	if !(Filter{}).Empty() || (Filter{ResourceSubscriptions: []string{"x"}}).Empty() {
		t.Error("Empty")
	}
}
