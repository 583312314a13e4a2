package store

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/redis/go-redis/v9"
)

// Bus carries events between gateway replicas that share a store.
type Bus interface {
	// Publish sends msg to every replica's Subscribe, this one's included.
	Publish(ctx context.Context, msg []byte) error
	// Subscribe calls fn with each message until ctx ends; it blocks (run it in its own
	// goroutine). fn runs on Subscribe's goroutine, one message at a time. Messages sent
	// while the subscription is down (Redis unreachable) are lost: pub/sub does not
	// queue them.
	Subscribe(ctx context.Context, fn func(msg []byte))
}

// BusOf returns the bus of s: Redis pub/sub for a Redis store (seen through NewCached),
// else a bus that does nothing (one gateway process: nobody else to tell).
func BusOf(s Store) Bus {
	for {
		switch v := s.(type) {
		case *Redis:
			return v
		case interface{ Unwrap() Store }:
			s = v.Unwrap()
		default:
			return nopBus{}
		}
	}
}

type nopBus struct{}

func (nopBus) Publish(context.Context, []byte) error { return nil }

func (nopBus) Subscribe(ctx context.Context, _ func([]byte)) { <-ctx.Done() }

// Publish sends msg on mcpgw:events, bounded by ctx and by opTimeout.
func (s *redisBus) Publish(ctx context.Context, msg []byte) error {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	return s.wrap("publish", s.c.Publish(ctx, EventsChannel, msg).Err())
}

// Subscription timing; variables so that tests can shorten them.
var (
	subPingEvery  = 15 * time.Second       // idle time before checking the connection
	subBackoffMin = 100 * time.Millisecond // wait before resubscribing, doubled up to Max
	subBackoffMax = 5 * time.Second
)

// Subscribe receives mcpgw:events until ctx ends (or the store is closed). After a lost
// connection it subscribes again, waiting between attempts from subBackoffMin doubling
// up to subBackoffMax (reset once a subscription is confirmed). A connection idle for
// subPingEvery is pinged; one that stays silent after the ping is dropped and replaced.
func (s *redisBus) Subscribe(ctx context.Context, fn func(msg []byte)) {
	backoff := subBackoffMin
	for ctx.Err() == nil {
		if s.subscribeOnce(ctx, fn) {
			backoff = subBackoffMin
		}
		if s.closed.Load() {
			return
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(2*backoff, subBackoffMax)
	}
}

// subscribeOnce runs one subscription until it fails or ctx ends; it reports whether the
// server confirmed it.
func (s *redisBus) subscribeOnce(ctx context.Context, fn func(msg []byte)) (confirmed bool) {
	ps := s.c.Subscribe(ctx)
	defer ps.Close()
	// Closing the PubSub is what interrupts a blocked read when ctx ends.
	stop := context.AfterFunc(ctx, func() { ps.Close() })
	defer stop()
	sctx, cancel := context.WithTimeout(ctx, opTimeout)
	err := ps.Subscribe(sctx, EventsChannel)
	cancel()
	if err != nil {
		return false
	}
	pinged := false
	for {
		m, err := ps.ReceiveTimeout(ctx, subPingEvery)
		if err != nil {
			var ne net.Error
			if ctx.Err() == nil && !pinged && errors.As(err, &ne) && ne.Timeout() {
				// Idle: ask for a pong; if nothing comes back by the next timeout, the
				// connection is dead.
				pctx, cancel := context.WithTimeout(ctx, opTimeout)
				err = ps.Ping(pctx)
				cancel()
				if err == nil {
					pinged = true
					continue
				}
			}
			return confirmed
		}
		pinged = false
		switch m := m.(type) {
		case *redis.Subscription:
			if m.Kind == "subscribe" {
				confirmed = true
			}
		case *redis.Message:
			fn([]byte(m.Payload))
		}
	}
}
