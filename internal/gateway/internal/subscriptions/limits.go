package subscriptions

import (
	"fmt"
	"sync"
)

// The settings that bound subscriptions (docs/config.md), named in their errors.
const (
	SettingPerSession = "http.max_subscriptions_per_session"
	SettingPerAgent   = "http.max_subscriptions_per_agent"
	SettingURIBytes   = "http.max_uri_bytes"
)

// Limits bound subscriptions; a field of zero or less bounds nothing.
type Limits struct {
	// PerSession bounds the URIs one session holds.
	PerSession int
	// PerAgent bounds the URIs all sessions of one agent hold together.
	PerAgent int
	// URIBytes bounds the length of one subscribed URI.
	URIBytes int
}

// CheckURI refuses a URI longer than l allows.
func (l Limits) CheckURI(uri string) error {
	if l.URIBytes > 0 && len(uri) > l.URIBytes {
		return &LimitError{Setting: SettingURIBytes, Limit: l.URIBytes, Size: len(uri)}
	}
	return nil
}

// Quota is what one more subscription of a session is checked against: the limits, and
// the count of its agent's subscriptions.
type Quota struct {
	Limits
	Agent  string
	Agents *Agents // nil: the agent's subscriptions are not counted
}

// Agents counts each agent's subscriptions over all its sessions. The zero value is ready.
type Agents struct {
	mu sync.Mutex
	n  map[string]int
}

// take counts one more subscription of agent, unless it holds limit already (limit ≤ 0:
// no bound). A nil Agents counts nothing.
func (a *Agents) take(agent string, limit int) bool {
	if a == nil {
		return true
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if limit > 0 && a.n[agent] >= limit {
		return false
	}
	if a.n == nil {
		a.n = map[string]int{}
	}
	a.n[agent]++
	return true
}

// give counts n subscriptions of agent fewer.
func (a *Agents) give(agent string, n int) {
	if a == nil || n == 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.n[agent] <= n {
		delete(a.n, agent)
		return
	}
	a.n[agent] -= n
}

// Of is how many subscriptions agent holds.
func (a *Agents) Of(agent string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n[agent]
}

// LimitError is a subscription refused by a limit; its text names the setting.
type LimitError struct {
	Setting string
	Limit   int
	Agent   string // SettingPerAgent: whose
	Size    int    // SettingURIBytes: the URI's length
}

func (e *LimitError) Error() string {
	switch e.Setting {
	case SettingURIBytes:
		return fmt.Sprintf("the uri is %d bytes, more than %s (%d) allows", e.Size, e.Setting, e.Limit)
	case SettingPerAgent:
		return fmt.Sprintf("agent %q holds %d resource subscriptions over its sessions, the most %s allows; unsubscribe from some first, or raise the setting", e.Agent, e.Limit, e.Setting)
	}
	return fmt.Sprintf("this session holds %d resource subscriptions, the most %s allows; unsubscribe from some first, or raise the setting", e.Limit, e.Setting)
}
