package sqlplugin

import (
	"context"
	"fmt"
	"sync"

	"github.com/mcpgw/mcpgw/plugin"
)

// subscriberBuffer is how many events a subscriber may fall behind before it is dropped
// (its channel closes; it re-lists and subscribes again).
const subscriberBuffer = 256

// broker hands the plugin's own writes to subscribers of (connection, key). Publishing
// never blocks a write.
type broker struct {
	mu     sync.Mutex
	subs   map[string]map[*subscriber]bool // connection + "\x00" + key
	closed bool
}

type subscriber struct {
	ch   chan plugin.Event
	once sync.Once
}

func (s *subscriber) close() { s.once.Do(func() { close(s.ch) }) }

// Subscribe implements plugin.Watcher: the plugin's own creates, updates, deletes and
// truncates of key's table on connID, and, on a postgres connection with listen: true,
// the changes the trigger function reports (listen.go).
func (p *Plugin) Subscribe(ctx context.Context, connID, key string) (<-chan plugin.Event, error) {
	if _, _, err := p.lookup(connID, key); err != nil {
		return nil, err
	}
	s := &subscriber{ch: make(chan plugin.Event, subscriberBuffer)}
	b := &p.watch
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, fmt.Errorf("the sql plugin is closed")
	}
	if b.subs == nil {
		b.subs = map[string]map[*subscriber]bool{}
	}
	topic := connID + "\x00" + key
	if b.subs[topic] == nil {
		b.subs[topic] = map[*subscriber]bool{}
	}
	b.subs[topic][s] = true
	b.mu.Unlock()
	context.AfterFunc(ctx, func() {
		b.mu.Lock()
		delete(b.subs[topic], s)
		b.mu.Unlock()
		s.close()
	})
	return s.ch, nil
}

func (b *broker) publish(e plugin.Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	topic := e.Connection + "\x00" + e.Key
	for s := range b.subs[topic] {
		select {
		case s.ch <- e:
		default:
			// Too far behind: drop the subscriber rather than block the write or lose
			// events silently. Its closed channel tells it to re-list.
			delete(b.subs[topic], s)
			s.close()
		}
	}
}

func (b *broker) closeAll() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for _, subs := range b.subs {
		for s := range subs {
			s.close()
		}
	}
	b.subs = nil
}
