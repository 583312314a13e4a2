package config

import (
	"time"
)

// validateLimits checks the sizes, counts and durations of http and upstream.
func (c validator) validateLimits(ps *Problems) {
	if c.HTTP.MaxBodyBytes < 1024 {
		ps.add(false, "http.max_body_bytes", "%d is too small (at least 1024)", c.HTTP.MaxBodyBytes)
	}
	if c.Upstream.MaxMessageBytes < 4096 {
		ps.add(false, "upstream.max_message_bytes", "%d is too small (at least 4096)", c.Upstream.MaxMessageBytes)
	}
	if c.Upstream.RelistInterval < 0 {
		ps.add(false, "upstream.relist_interval", "%s is negative (0: the default, 1s)", c.Upstream.RelistInterval)
	}
	if c.Upstream.StartWait < 0 {
		ps.add(false, "upstream.start_wait", "%s is negative (0 serves at once)", c.Upstream.StartWait)
	}
	if c.Upstream.BusyPoll > 10*time.Millisecond {
		ps.add(false, "upstream.busy_poll", "%s is too long (at most 10ms; negative turns it off)", c.Upstream.BusyPoll)
	}
	if c.HTTP.MaxSessions < 1 {
		ps.add(false, "http.max_sessions", "%d must be positive", c.HTTP.MaxSessions)
	}
	if c.HTTP.MaxSessionsPerAgent < 1 {
		ps.add(false, "http.max_sessions_per_agent", "%d must be positive", c.HTTP.MaxSessionsPerAgent)
	} else if c.HTTP.MaxSessionsPerAgent > c.HTTP.MaxSessions {
		ps.add(true, "http.max_sessions_per_agent", "%d is more than http.max_sessions (%d): one agent may hold every session", c.HTTP.MaxSessionsPerAgent, c.HTTP.MaxSessions)
	}
	for _, l := range []struct {
		key string
		v   int
	}{{"http.max_subscriptions_per_session", c.HTTP.MaxSubscriptionsPerSession}, {"http.max_subscriptions_per_agent", c.HTTP.MaxSubscriptionsPerAgent}} {
		if l.v < 1 {
			ps.add(false, l.key, "%d must be positive", l.v)
		}
	}
	if c.HTTP.MaxURIBytes < 256 {
		ps.add(false, "http.max_uri_bytes", "%d is too small (at least 256)", c.HTTP.MaxURIBytes)
	}
	if c.Upstream.MaxInstancesPerAgent < 0 {
		ps.add(false, "upstream.max_instances_per_agent", "must not be negative")
	}
	if c.Upstream.StartConcurrency < 1 {
		ps.add(false, "upstream.start_concurrency", "%d must be positive (leave it unset for the default, %d here)", c.Upstream.StartConcurrency, DefaultStartConcurrency())
	}
	if c.HTTP.MaxConnections < 1 {
		ps.add(false, "http.max_connections", "%d must be positive", c.HTTP.MaxConnections)
	}
	if c.HTTP.StreamQueue < 1 {
		ps.add(false, "http.stream_queue", "%d must be positive", c.HTTP.StreamQueue)
	}
	if c.HTTP.ResumeBufferBytes < 4096 {
		ps.add(false, "http.resume_buffer_bytes", "%d is too small (at least 4096)", c.HTTP.ResumeBufferBytes)
	}
	if c.HTTP.ResumeFor < 0 {
		ps.add(false, "http.resume_for", "must not be negative")
	}
	if c.HTTP.ResumeMaxBytes < int64(c.HTTP.ResumeBufferBytes) {
		ps.add(false, "http.resume_max_bytes", "%d is smaller than http.resume_buffer_bytes (%d)", c.HTTP.ResumeMaxBytes, c.HTTP.ResumeBufferBytes)
	}
	if c.HTTP.BodyTimeout < 0 {
		ps.add(false, "http.body_timeout", "must not be negative")
	}
	if c.HTTP.BodyMinRate < 1 {
		ps.add(false, "http.body_min_rate", "%d must be positive (bytes a second; leave it unset for 1024)", c.HTTP.BodyMinRate)
	}
	if c.HTTP.BodyRateGrace < 0 {
		ps.add(false, "http.body_rate_grace", "must not be negative")
	}
	if c.HTTP.PageSize < 1 {
		ps.add(false, "http.page_size", "%d must be positive", c.HTTP.PageSize)
	}
}
