package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"
)

// ConversationPruner is a store whose conversation records the gateway bounds itself:
// a record is written for every new X-Conversation-ID an agent sends, so a caller that
// varies it would otherwise grow the store for ever (docs/config.md, "Fair shares").
// Bolt and Memory implement it; Redis does not (its records are shared by replicas, each
// of which would prune the others'; bound its memory with Redis's own maxmemory policy).
type ConversationPruner interface {
	// PruneConversations deletes the conversations last written before before, then the
	// oldest beyond keep, and returns how many it deleted. It also deletes the expired
	// credential records (PruneCredentials), uncounted: this is where the store is pruned.
	// (Redis expires those by itself.)
	PruneConversations(before time.Time, keep int) (int, error)
}

// PrunerOf returns the pruner behind s (seeing through NewCached), or nil.
func PrunerOf(s Store) ConversationPruner {
	for {
		switch v := s.(type) {
		case ConversationPruner:
			return v
		case interface{ Unwrap() Store }:
			s = v.Unwrap()
		default:
			return nil
		}
	}
}

// convAge is one conversation record's key and last write, for pruning.
type convAge[K any] struct {
	key     K
	updated time.Time
}

// doomed returns the keys to delete: those written before before, then the oldest beyond
// keep of the rest.
func doomed[K any](all []convAge[K], before time.Time, keep int) []K {
	slices.SortFunc(all, func(a, b convAge[K]) int { return a.updated.Compare(b.updated) })
	var out []K
	for i, c := range all {
		if c.updated.Before(before) || len(all)-i > keep {
			out = append(out, c.key)
		}
	}
	return out
}

func (s *Memory) PruneConversations(before time.Time, keep int) (int, error) {
	if _, err := s.PruneCredentials(time.Now()); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	all := make([]convAge[convKey], 0, len(s.convs))
	for k, c := range s.convs {
		all = append(all, convAge[convKey]{k, c.Updated})
	}
	gone := doomed(all, before, keep)
	for _, k := range gone {
		delete(s.convs, k)
	}
	return len(gone), nil
}

func (s *Bolt) PruneConversations(before time.Time, keep int) (int, error) {
	if _, err := s.PruneCredentials(time.Now()); err != nil {
		return 0, fmt.Errorf("prune credentials: %w", err)
	}
	var all []convAge[[]byte]
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketConvs).ForEach(func(k, v []byte) error {
			var c Conversation
			_ = json.Unmarshal(v, &c) // an unreadable record has the zero time: it goes first
			all = append(all, convAge[[]byte]{slices.Clone(k), c.Updated})
			return nil
		})
	})
	if err != nil {
		return 0, err
	}
	gone := doomed(all, before, keep)
	if len(gone) == 0 {
		return 0, nil
	}
	err = s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketConvs)
		for _, k := range gone {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return len(gone), nil
}

// PruneCredentials deletes the credentials expired at now and returns how many it
// deleted.
func (s *Memory) PruneCredentials(now time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for k, c := range s.creds {
		if c.expired(now) {
			delete(s.creds, k)
			n++
		}
	}
	return n, nil
}

// PruneCredentials deletes the credentials expired at now and returns how many it
// deleted. A record that does not decode is left for an operator to see. It reads first
// and writes (an fsync) only when something expired; the write checks each record again,
// as it may have been written since.
func (s *Bolt) PruneCredentials(now time.Time) (int, error) {
	var doomed [][]byte
	err := s.db.View(func(tx *bolt.Tx) error {
		return credBucket(tx).ForEach(func(k, v []byte) error {
			if c, err := decodeCred(v); err == nil && c.expired(now) {
				doomed = append(doomed, bytes.Clone(k))
			}
			return nil
		})
	})
	if err != nil || len(doomed) == 0 {
		return 0, err
	}
	n := 0
	err = s.db.Update(func(tx *bolt.Tx) error {
		n = 0
		b := credBucket(tx)
		for _, k := range doomed {
			if c, err := decodeCred(b.Get(k)); err != nil || !c.expired(now) {
				continue
			}
			if err := b.Delete(k); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}
