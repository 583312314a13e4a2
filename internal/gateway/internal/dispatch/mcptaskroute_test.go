package dispatch

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/mcptask"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/store"
)

// A route that names an instance this process does not have, and no upstream session to
// reattach to (a stdio server's, after a restart or from another replica), is lost:
// chooseTaskVia says so naming the server and leaves the route to its caller (a request
// forgets it, a list keeps it). A route that names no instance (a stateless upstream's,
// or one recorded before instances were) goes to the session's instance as before.
func TestChooseTaskViaLostInstance(t *testing.T) {
	tasks := mcptask.New(store.NewMemory())
	s := &session.Session{ID: "sess-1"}
	owner := mcptask.Owner("", "a1", s.ID)
	r := mcptask.Route{Server: "viastdio", UpstreamID: "u-1", Session: s.ID, Instance: "from-another-process"}
	id, err := tasks.Add(owner, r, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	via, lost := chooseTaskVia(tasks, log, s, owner, id, r)
	if via != nil || !strings.HasPrefix(lost, "task lost: ") || !strings.Contains(lost, `server "viastdio"`) {
		t.Fatalf("chooseTaskVia of a gone stdio instance = %v, %q; want lost naming the server", via, lost)
	}
	if _, ok, _ := tasks.Get(owner, id); !ok {
		t.Error("chooseTaskVia forgot the route itself")
	}
	if via, lost := chooseTaskVia(tasks, log, s, owner, id, mcptask.Route{Server: "x", UpstreamID: "u-2"}); via != nil || lost != "" {
		t.Errorf("a route naming no instance: %v, %q; want the session's instance (nil, \"\")", via, lost)
	}
	if tasks.Live("from-another-process") != nil || tasks.Live("") != nil {
		t.Error("an instance id this process never made is live")
	}
}
