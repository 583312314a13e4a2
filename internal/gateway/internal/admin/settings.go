package admin

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/store"
)

// Gateway-wide settings that are safe to change while it runs. They are one stored entry
// (kind settings, name gateway: kindSettings, settingsName) whose fields override the
// file's; a field left out keeps the file's value.

// settingsAPI is the admin API's gateway-wide settings (/api/settings): read, and changed
// live.
type settingsAPI struct{ configWriter }

type settingsDoc struct {
	Naming              *namingDoc `json:"naming,omitempty"`
	Handshake           string     `json:"handshake,omitempty"`
	Search              *searchDoc `json:"search,omitempty"`
	Auto                *autoDoc   `json:"auto,omitempty"`
	SessionIdleTimeout  string     `json:"session_idle_timeout,omitempty"`
	UpstreamIdleTimeout string     `json:"upstream_idle_timeout,omitempty"`
	LogLevel            string     `json:"log_level,omitempty"`
}

type namingDoc struct {
	Prefix    string `json:"prefix,omitempty"`
	Separator string `json:"separator,omitempty"`
	MaxLength int    `json:"max_length,omitempty"`
}

// searchDoc is http.search: the tools the search form always lists in full, and the
// definitions a query returns by default. Pinned, when sent, replaces the file's list
// ([] empties it).
type searchDoc struct {
	Pinned  *[]string `json:"pinned,omitempty"`
	Results int       `json:"results,omitempty"`
}

// autoDoc is http.auto: the token thresholds of the auto form.
type autoDoc struct {
	FullMaxTokens int `json:"full_max_tokens,omitempty"`
	ThinMaxTokens int `json:"thin_max_tokens,omitempty"`
}

// check reports the fields config.Validate cannot see (durations are strings here).
func (d *settingsDoc) check() []FieldError {
	var errs []FieldError
	for _, f := range []struct{ name, v string }{{"session_idle_timeout", d.SessionIdleTimeout}, {"upstream_idle_timeout", d.UpstreamIdleTimeout}} {
		if dur, fe := parseDuration(f.v, f.name); fe != nil {
			errs = append(errs, *fe)
		} else if f.v != "" && dur < time.Second {
			errs = append(errs, FieldError{Field: f.name, Message: fmt.Sprintf("%q is too short (at least 1s)", f.v)})
		}
	}
	if d.LogLevel != "" {
		var lvl slog.Level
		if lvl.UnmarshalText([]byte(d.LogLevel)) != nil {
			errs = append(errs, FieldError{Field: "log_level", Message: fmt.Sprintf("%q is not one of debug, info, warn, error", d.LogLevel)})
		}
	}
	return errs
}

// apply writes the document's fields over c (a copy the caller owns).
func (d *settingsDoc) apply(c *config.Config) {
	if n := d.Naming; n != nil {
		if n.Prefix != "" {
			c.Naming.Prefix = n.Prefix
		}
		if n.Separator != "" {
			c.Naming.Separator = n.Separator
		}
		if n.MaxLength != 0 {
			c.Naming.MaxLength = n.MaxLength
		}
	}
	if d.Handshake != "" {
		c.HTTP.Handshake = d.Handshake
	}
	d.applyForms(c)
	if v, err := time.ParseDuration(d.SessionIdleTimeout); err == nil && d.SessionIdleTimeout != "" {
		c.HTTP.SessionIdle = v
	}
	if v, err := time.ParseDuration(d.UpstreamIdleTimeout); err == nil && d.UpstreamIdleTimeout != "" {
		c.Upstream.IdleTimeout = v
	}
	if d.LogLevel != "" {
		c.Log.Level = d.LogLevel
	}
}

// applyForms writes the search and auto fields over c. The pinned list is a new slice:
// c is a shallow copy of the file's config.
func (d *settingsDoc) applyForms(c *config.Config) {
	if s := d.Search; s != nil {
		if s.Pinned != nil {
			c.HTTP.Search.Pinned = slices.Clone(*s.Pinned)
		}
		if s.Results != 0 {
			c.HTTP.Search.Results = s.Results
		}
	}
	if a := d.Auto; a != nil {
		if a.FullMaxTokens != 0 {
			c.HTTP.Auto.FullMaxTokens = a.FullMaxTokens
		}
		if a.ThinMaxTokens != 0 {
			c.HTTP.Auto.ThinMaxTokens = a.ThinMaxTokens
		}
	}
}

// clientsView is the client profiles in force (the file's and the built-in ones), by
// name, as the file spells them.
func clientsView(c *config.Config) map[string]any {
	out := make(map[string]any, len(c.Clients))
	for id, p := range c.Clients {
		if p == nil {
			continue
		}
		out[id] = map[string]any{"match": nonNil(p.Match), "name_max": p.NameMax, "name_pattern": p.NamePattern, "max_tools": p.MaxTools}
	}
	return out
}

// settingsView is what GET /api/settings shows: the values in force.
func settingsView(c *config.Config, e *store.ConfigEntry) map[string]any {
	v := map[string]any{
		"naming":                map[string]any{"prefix": c.Naming.Prefix, "separator": c.Naming.Separator, "max_length": c.Naming.MaxLength},
		"handshake":             c.HTTP.Handshake,
		"search":                map[string]any{"pinned": nonNil(c.HTTP.Search.Pinned), "results": c.HTTP.Search.Results},
		"auto":                  map[string]any{"full_max_tokens": c.HTTP.Auto.FullMaxTokens, "thin_max_tokens": c.HTTP.Auto.ThinMaxTokens},
		"clients":               clientsView(c),
		"session_idle_timeout":  durationString(c.HTTP.SessionIdle),
		"upstream_idle_timeout": durationString(c.Upstream.IdleTimeout),
		"log_level":             c.Log.Level,
		"source":                "file",
		"version":               int64(0),
	}
	if e != nil {
		var d settingsDoc
		_ = json.Unmarshal(e.Doc, &d)
		v["source"], v["version"], v["updated_at"], v["api"] = "api", e.Version, e.Updated, d
	}
	v["etag"] = ETag(Hash(v))
	return v
}

func (a settingsAPI) settingsEntry(w http.ResponseWriter) (*store.ConfigEntry, bool) {
	e, err := a.port.Store().GetConfig(kindSettings, settingsName)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, true
	case err != nil:
		Error(w, http.StatusServiceUnavailable, "store: "+err.Error())
		return nil, false
	}
	return e, true
}

func (a settingsAPI) ServeSettings(w http.ResponseWriter, r *http.Request) {
	e, ok := a.settingsEntry(w)
	if !ok {
		return
	}
	v := settingsView(a.port.Config(), e)
	w.Header().Set("ETag", v["etag"].(string))
	JSON(w, http.StatusOK, v)
}

// ServePutSettings replaces the API's settings (fields left out keep the file's values) and
// applies them live: naming re-lists every server, the others apply at the next request.
func (a settingsAPI) ServePutSettings(w http.ResponseWriter, r *http.Request) {
	body, ok := ReadBody(w, r)
	if !ok {
		return
	}
	defer a.port.LockConfig()()
	cur, ok := a.settingsEntry(w)
	if !ok {
		return
	}
	if PreconditionFailed(w, r, settingsView(a.port.Config(), cur)["etag"].(string)) {
		return
	}
	var in struct {
		settingsDoc
		Source  json.RawMessage `json:"source"`
		Version json.RawMessage `json:"version"`
		ETag    json.RawMessage `json:"etag"`
		Updated json.RawMessage `json:"updated_at"`
		API     json.RawMessage `json:"api"`
	}
	if errs := DecodeStrict(body, &in, nil); errs != nil {
		FieldErrors(w, http.StatusBadRequest, errs[0].WithField(), errs, nil)
		return
	}
	doc := in.settingsDoc
	fieldErrs := doc.check()
	raw, _ := json.Marshal(doc)
	now := time.Now().UTC()
	next := &store.ConfigEntry{Kind: kindSettings, Name: settingsName, Doc: raw, Source: "api", Created: now, Updated: now, Version: 1}
	if cur != nil {
		next.Created, next.Version = cur.Created, cur.Version+1
	}
	warns, ok := a.commitEntry(w, r, kindSettings, "settings", settingsName, cur, next, fieldErrs, nil, false)
	if !ok {
		return
	}
	v := settingsView(a.port.Config(), next)
	if len(warns) > 0 {
		v["warnings"] = warns
	}
	w.Header().Set("ETag", v["etag"].(string))
	JSON(w, http.StatusOK, v)
}
