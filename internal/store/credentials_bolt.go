package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// bucketCredentialsName is the bbolt bucket of credential records (layout 4), keyed by
// credKey. A constant (converted where used) rather than a []byte variable like the other
// bucket names: the package keeps no more variables than it must.
const bucketCredentialsName = "credentials"

func credBucket(tx *bolt.Tx) *bolt.Bucket { return tx.Bucket([]byte(bucketCredentialsName)) }

// getCred reads the record at k in b (nil: none).
func getCred(b *bolt.Bucket, k []byte) (*Credential, error) {
	v := b.Get(k)
	if v == nil {
		return nil, nil
	}
	c, err := decodeCred(v)
	if err != nil {
		return nil, fmt.Errorf("credential %q: %w", k, err)
	}
	return c, nil
}

// decodeCred decodes a stored record (nil, an absent one, is an error).
func decodeCred(v []byte) (*Credential, error) {
	c := new(Credential)
	if err := json.Unmarshal(v, c); err != nil {
		return nil, err
	}
	return c, nil
}

// PutCredential compares and sets in one write transaction: bbolt runs one at a time, so
// nothing writes between the read of the stored Rev and the write of the new record.
func (s *Bolt) PutCredential(c *Credential, rev int64) (int64, error) {
	if err := checkPut(c, rev); err != nil {
		return 0, err
	}
	k := []byte(credKey(c.Kind, c.Server, c.Subject))
	now := time.Now()
	n := nextCredential(c, rev, now)
	v, err := json.Marshal(n)
	if err != nil {
		return 0, err
	}
	err = s.db.Update(func(tx *bolt.Tx) error {
		b := credBucket(tx)
		stored, err := getCred(b, k)
		if err != nil {
			return err
		}
		if casRev(stored, now) != rev {
			return ErrConflict
		}
		return b.Put(k, v)
	})
	if err != nil {
		return 0, err
	}
	return n.Rev, nil
}

func (s *Bolt) GetCredential(kind, server, subject string) (*Credential, error) {
	var c *Credential
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		c, err = getCred(credBucket(tx), []byte(credKey(kind, server, subject)))
		return err
	})
	if err != nil {
		return nil, err
	}
	if c == nil || c.expired(time.Now()) {
		return nil, ErrNotFound
	}
	return c, nil
}

func (s *Bolt) DeleteCredential(kind, server, subject string) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		return credBucket(tx).Delete([]byte(credKey(kind, server, subject)))
	})
}

// ListCredentials reads kind's records alone: they are the keys after the prefix kind+NUL,
// in server, subject order.
func (s *Bolt) ListCredentials(kind string) ([]*Credential, error) {
	var out []*Credential
	now := time.Now()
	prefix := []byte(kind + "\x00")
	err := s.db.View(func(tx *bolt.Tx) error {
		cur := credBucket(tx).Cursor()
		for k, v := cur.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = cur.Next() {
			c := new(Credential)
			if err := json.Unmarshal(v, c); err != nil {
				return fmt.Errorf("credential %q: %w", k, err)
			}
			if !c.expired(now) {
				out = append(out, c)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sortCredentials(out)
	return out, nil
}

func (s *Bolt) TakeCredential(kind, server, subject string) (*Credential, error) {
	var c *Credential
	k := []byte(credKey(kind, server, subject))
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := credBucket(tx)
		var err error
		if c, err = getCred(b, k); err != nil || c == nil {
			return err
		}
		return b.Delete(k)
	})
	if err != nil {
		return nil, err
	}
	if c == nil || c.expired(time.Now()) {
		return nil, ErrNotFound
	}
	return c, nil
}

// Lock is held by one caller at a time among the users of this store value: a bbolt
// file is open in one process (see Store.Lock).
func (s *Bolt) Lock(ctx context.Context, name string, ttl time.Duration) (func(), error) {
	return s.locks.lock(ctx, name, ttl)
}
