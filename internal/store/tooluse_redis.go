package store

import (
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Tool use in Redis: a hash of counts per agent (mcpgw:tooluse:<agent>) and its ranking as
// a JSON list (mcpgw:toolrank:<agent>), both forgotten after ToolUseTTL without a write.

// ToolUseTTL is how long Redis keeps an agent's tool use after its last write.
const ToolUseTTL = 30 * 24 * time.Hour

func toolUseKey(agent string) string  { return "mcpgw:tooluse:" + keyEscaper.Replace(agent) }
func toolRankKey(agent string) string { return "mcpgw:toolrank:" + keyEscaper.Replace(agent) }

// addToolUseScript adds ARGV[3..] (field, count pairs) to the hash KEYS[1], a new field
// only while the hash has fewer than ARGV[1] fields, and sets its expiry to ARGV[2] ms.
const addToolUseScript = `
local max = tonumber(ARGV[1])
for i = 3, #ARGV, 2 do
  if redis.call('HEXISTS', KEYS[1], ARGV[i]) == 1 or redis.call('HLEN', KEYS[1]) < max then
    redis.call('HINCRBY', KEYS[1], ARGV[i], ARGV[i+1])
  end
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 0`

// redisToolUse is a Redis store's tool-use records.
type redisToolUse struct{ *redisConn }

// ToolUses are the store's tool-use records.
func (s *Redis) ToolUses() ToolUse { return redisToolUse{s.redisConn} }

func (s redisToolUse) AddToolUse(agent string, counts map[string]int64) error {
	if agent == "" {
		return errToolUseAgent
	}
	args := []any{MaxToolUseTools, ToolUseTTL.Milliseconds()}
	for k, n := range counts {
		if n > 0 {
			args = append(args, k, n)
		}
	}
	if len(args) == 2 {
		return nil
	}
	ctx, cancel := opCtx()
	defer cancel()
	return s.wrap("add tool use", s.c.Eval(ctx, addToolUseScript, []string{toolUseKey(agent)}, args...).Err())
}

func (s redisToolUse) GetToolUse(agent string) (*ToolUseRecord, error) {
	ctx, cancel := opCtx()
	defer cancel()
	pipe := s.c.Pipeline()
	counts := pipe.HGetAll(ctx, toolUseKey(agent))
	rank := pipe.Get(ctx, toolRankKey(agent))
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, s.wrap("get tool use", err)
	}
	r := &ToolUseRecord{Counts: map[string]int64{}}
	for k, v := range counts.Val() {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 {
			r.Counts[k] = n
		}
	}
	if b, err := rank.Bytes(); err == nil && json.Unmarshal(b, &r.Ranking) != nil {
		r.Ranking = nil // a ranking this code cannot read is computed again
	}
	return r, nil
}

func (s redisToolUse) PutToolRanking(agent string, ranking []string) error {
	if agent == "" {
		return errToolUseAgent
	}
	b, err := json.Marshal(capRanking(ranking))
	if err != nil {
		return err
	}
	ctx, cancel := opCtx()
	defer cancel()
	return s.wrap("put tool ranking", s.c.Set(ctx, toolRankKey(agent), b, ToolUseTTL).Err())
}
