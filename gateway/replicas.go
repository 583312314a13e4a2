package gateway

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"time"

	"github.com/mcpgw/mcpgw/sessions"
)

// Replicas share sessions, tasks and conversations through the store; events that change
// what sessions see travel on the store's bus (Redis pub/sub), so that list_changed also
// reaches the GET streams held by other replicas. A single gateway's bus does nothing.

type busEvent struct {
	Origin string `json:"origin"`
	Kind   string `json:"kind"` // reload | server | end
	Name   string `json:"name,omitempty"`
}

func (g *Gateway) startBus() {
	g.origin = rand.Text()[:12]
	g.bus = sessions.BusOf(g.store)
	go g.bus.Subscribe(g.ctx, func(msg []byte) {
		var ev busEvent
		if json.Unmarshal(msg, &ev) != nil || ev.Origin == g.origin {
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
		case "end":
			sessions.Evict(g.store, ev.Name)
			g.live.mu.Lock()
			s := g.live.dropLive(ev.Name)
			g.live.mu.Unlock()
			if s != nil {
				g.metrics.SessionEnded(s.rec.Agent, s.Transport)
				s.close()
			}
		}
	})
}

func (g *Gateway) publish(kind, name string) {
	if g.bus == nil {
		return
	}
	b, _ := json.Marshal(busEvent{Origin: g.origin, Kind: kind, Name: name})
	ctx, cancel := context.WithTimeout(g.ctx, 2*time.Second)
	defer cancel()
	if err := g.bus.Publish(ctx, b); err != nil {
		g.log.Warn("event not published to other replicas", "kind", kind, "err", err)
	}
}

// PublishReload tells other replicas that this one reloaded its config, so that they
// re-read theirs now rather than at their next poll.
func (g *Gateway) PublishReload() { g.publish("reload", "") }

// notifyAll re-checks every live session's view.
func (g *Gateway) notifyAll() {
	all := g.live.all()
	for _, s := range all {
		g.gate.reresolve(s)
		if !s.isClosed() {
			g.notifyIfChanged(s)
		}
	}
}

// sweep drops stored sessions idle past the idle timeout (after a restart nobody else
// would) and refreshes last-seen times of live ones, so that the store stays true.
func (g *Gateway) sweep(now time.Time) {
	recs, err := g.store.List()
	if err != nil {
		return
	}
	g.live.mu.RLock()
	live := make(map[string]*Session, len(g.live.sessions))
	for id, s := range g.live.sessions {
		live[id] = s
	}
	g.live.mu.RUnlock()
	var idle []*storedRec
	for _, r := range recs {
		if s := live[r.ID]; s != nil {
			seen := time.Unix(0, s.lastSeen.Load()).UTC()
			if seen.Sub(r.LastSeen) > time.Minute {
				s.mu.Lock()
				s.rec.LastSeen = seen
				rec := s.rec
				s.mu.Unlock()
				_ = g.store.Put(&rec)
			}
			continue
		}
		if now.Sub(r.LastSeen) > g.policy().cfg.HTTP.SessionIdle {
			_ = g.store.Delete(r.ID)
			continue
		}
		idle = append(idle, &storedRec{id: r.ID, seen: r.LastSeen})
	}
	if _, shared := g.bus.(*sessions.Redis); !shared {
		// A store of this process alone: every record not live here is a session nobody
		// serves until it is named again. (With replicas, they are other replicas' live
		// sessions, each bounded there.)
		g.live.trimStored(idle, len(live))
	}
	g.live.pruneConversations(now)
}
