package store

import (
	"fmt"
	"strconv"

	bolt "go.etcd.io/bbolt"
)

// boltMigration brings a store from layout From to From+1. They run in order, each in the
// same transaction as the version bump, when the file is opened.
type boltMigration struct {
	From int
	Name string
	Run  func(tx *bolt.Tx) error
}

// boltMigrations are every layout change since the first release. Layout 1 had the
// buckets sessions, tasks and conversations and no schema version; its files are kept in
// testdata/store-v1.db; a layout 3 file, written just before layout 4, in
// testdata/store-v3.db.
var boltMigrations = []boltMigration{
	{From: 1, Name: "v1-to-v2-config-bucket", Run: func(tx *bolt.Tx) error {
		// Admin API config entries (servers, agents, executors, settings).
		_, err := tx.CreateBucketIfNotExists(bucketConfig)
		return err
	}},
	{From: 2, Name: "v2-to-v3-pins-bucket", Run: func(tx *bolt.Tx) error {
		// Integrity records of served definitions.
		_, err := tx.CreateBucketIfNotExists(bucketPins)
		return err
	}},
	{From: 3, Name: "v3-to-v4-credentials-bucket", Run: func(tx *bolt.Tx) error {
		// Sealed upstream credentials (OAuth grants, client registrations, pending flows).
		_, err := tx.CreateBucketIfNotExists([]byte(bucketCredentialsName))
		return err
	}},
}

// migrateBolt reads the file's layout version (1 when it has none: the first release
// wrote none) and runs the migrations up to ConfigSchemaVersion. A file written by a
// newer release is refused rather than half understood.
func migrateBolt(tx *bolt.Tx) ([]string, error) {
	meta, err := tx.CreateBucketIfNotExists(bucketMeta)
	if err != nil {
		return nil, err
	}
	v := 1
	if raw := meta.Get(keySchemaVersion); raw != nil {
		n, err := strconv.Atoi(string(raw))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("schema_version %q is not a layout version", raw)
		}
		v = n
	}
	if v > ConfigSchemaVersion {
		return nil, fmt.Errorf("written by a newer mcpgw (store layout %d; this one reads up to %d)", v, ConfigSchemaVersion)
	}
	var ran []string
	for _, m := range boltMigrations {
		if m.From < v {
			continue
		}
		if err := m.Run(tx); err != nil {
			return nil, fmt.Errorf("migration %s: %w", m.Name, err)
		}
		ran = append(ran, m.Name)
		v = m.From + 1
	}
	if err := meta.Put(keySchemaVersion, []byte(strconv.Itoa(v))); err != nil {
		return nil, err
	}
	return ran, nil
}
