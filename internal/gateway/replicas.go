package gateway

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"time"

	"github.com/mcpgw/mcpgw/internal/store"
)

// Replicas share sessions, tasks and conversations through the store; events that change
// what sessions see travel on the store's bus (Redis pub/sub), so that list_changed also
// reaches the GET streams held by other replicas. A single gateway's bus does nothing.

// replicaLink is this replica's end of the bus: origin tells its own events from the
// others'.
type replicaLink struct {
	g      *Gateway
	bus    store.Bus
	origin string
}

type busEvent struct {
	Origin string `json:"origin"`
	Kind   string `json:"kind"` // reload | server | end | integrity
	Name   string `json:"name,omitempty"`
}

func (rl *replicaLink) startBus() {
	g := rl.g
	rl.origin = rand.Text()[:12]
	rl.bus = store.BusOf(g.store)
	go rl.bus.Subscribe(g.ctx, func(msg []byte) {
		var ev busEvent
		if json.Unmarshal(msg, &ev) != nil || ev.Origin == rl.origin {
			return
		}
		switch ev.Kind {
		case "reload":
			if g.ReloadHook != nil {
				g.ReloadHook()
			} else {
				// No file watcher: apply the stored API entries another replica changed.
				go g.ReloadStored()
			}
		case "server":
			g.serverChanged(ev.Name)
		case "integrity": // an admin approved or rejected definitions of server Name
			g.reg.Integrity().Reload(ev.Name)
		case "end":
			store.Evict(g.store, ev.Name)
			s := g.live.evict(ev.Name)
			if s != nil {
				g.metrics.SessionEnded(s.Rec.Agent, s.Transport)
				s.Close()
			}
		}
	})
}

func (rl *replicaLink) publish(kind, name string) {
	g := rl.g
	if rl.bus == nil {
		return
	}
	b, _ := json.Marshal(busEvent{Origin: rl.origin, Kind: kind, Name: name})
	ctx, cancel := context.WithTimeout(g.ctx, 2*time.Second)
	defer cancel()
	if err := rl.bus.Publish(ctx, b); err != nil {
		g.log.Warn("event not published to other replicas", "kind", kind, "err", err)
	}
}

// PublishReload tells other replicas that this one reloaded its config, so that they
// re-read theirs now rather than at their next poll.
func (g *Gateway) PublishReload() { g.replicas.publish("reload", "") }

// notifyAll re-checks every live session's view.
func (g *Gateway) notifyAll() {
	all := g.live.all()
	for _, s := range all {
		g.gate.reresolve(s)
		if !s.IsClosed() {
			s.NotifyIfChanged()
		}
	}
}
