package registry

import (
	"encoding/json"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/registry/internal/integrity"
	"github.com/mcpgw/mcpgw/internal/store"
)

// TestAdminActWaitsForTheChange: an admin act that changed a server approves the first
// catalogue after it that changes something. A catalogue that changes nothing (an
// instance of the old definition re-listing, under load, before the new one's probe)
// leaves the act pending, where it used to take it and leave the new catalogue held; an
// act past its window approves nothing.
func TestAdminActWaitsForTheChange(t *testing.T) {
	in := &Integrity{}
	in.once.Do(func() {})
	in.g = integrity.New(store.NewMemory(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	p := integrity.Policy{Mode: "pin", FirstUse: "trust", OnChange: "hold_new", Suspicious: "hold"}
	old := integrity.NewDef(integrity.KindTool, "t", json.RawMessage(`{"name":"t","description":"Old."}`))
	next := integrity.NewDef(integrity.KindTool, "t", json.RawMessage(`{"name":"t","description":"New."}`))
	later := integrity.NewDef(integrity.KindTool, "t", json.RawMessage(`{"name":"t","description":"Later."}`))
	var act atomic.Pointer[pendingAct]
	in.observeWithAct("s", p, &act, []integrity.Def{old}, "config")

	act.Store(&pendingAct{By: "config reload", Until: time.Now().Add(time.Minute)})
	if held := in.observeWithAct("s", p, &act, []integrity.Def{old}, "config"); held != 0 || act.Load() == nil {
		t.Fatalf("the old catalogue again: held %d, act pending %v; want 0 held and the act still pending", held, act.Load() != nil)
	}
	if held := in.observeWithAct("s", p, &act, []integrity.Def{next}, "config"); held != 0 {
		t.Fatalf("the act's change: held %d, want it approved by the act", held)
	}
	if serve, _ := in.g.Verdict("s", integrity.KindTool, "t", next.Hash, p); !serve || act.Load() != nil {
		t.Fatalf("after the act's change: served %v, act pending %v; want served and the act taken", serve, act.Load() != nil)
	}

	act.Store(&pendingAct{By: "config reload", Until: time.Now().Add(-time.Second)})
	if held := in.observeWithAct("s", p, &act, []integrity.Def{later}, "config"); held != 1 {
		t.Fatalf("a change after the act's window: held %d, want 1", held)
	}
}
