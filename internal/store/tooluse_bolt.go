package store

import (
	"encoding/json"

	bolt "go.etcd.io/bbolt"
)

// bucketToolUse holds a ToolUseRecord (JSON) per agent. It is made on the first write, so
// files from before it need no migration.
const bucketToolUse = "tool_use"

// boltToolUse is a bbolt store's tool-use records.
type boltToolUse struct{ db *bolt.DB }

// ToolUses are the store's tool-use records.
func (s *Bolt) ToolUses() ToolUse { return boltToolUse{s.db} }

func (s boltToolUse) AddToolUse(agent string, counts map[string]int64) error {
	if agent == "" {
		return errToolUseAgent
	}
	return s.updateToolUse(agent, func(r *ToolUseRecord) { addCounts(r, counts) })
}

func (s boltToolUse) PutToolRanking(agent string, ranking []string) error {
	if agent == "" {
		return errToolUseAgent
	}
	return s.updateToolUse(agent, func(r *ToolUseRecord) { r.Ranking = capRanking(ranking) })
}

// updateToolUse changes agent's record by change in one transaction, within
// MaxToolUseAgents agents.
func (s boltToolUse) updateToolUse(agent string, change func(*ToolUseRecord)) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte(bucketToolUse))
		if err != nil {
			return err
		}
		r := new(ToolUseRecord)
		if v := b.Get([]byte(agent)); v != nil {
			if err := json.Unmarshal(v, r); err != nil {
				r = new(ToolUseRecord) // a record this code cannot read is started again
			}
		} else if b.Stats().KeyN >= MaxToolUseAgents {
			return nil
		}
		change(r)
		v, err := json.Marshal(r)
		if err != nil {
			return err
		}
		return b.Put([]byte(agent), v)
	})
}

func (s boltToolUse) GetToolUse(agent string) (*ToolUseRecord, error) {
	r := new(ToolUseRecord)
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(bucketToolUse))
		if b == nil {
			return nil
		}
		if v := b.Get([]byte(agent)); v != nil && json.Unmarshal(v, r) != nil {
			r = new(ToolUseRecord)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return cloneToolUse(r), nil
}
