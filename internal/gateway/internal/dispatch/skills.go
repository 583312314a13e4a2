package dispatch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/reqparams"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// Skills (io.modelcontextprotocol/skills): skills/list is a list of the view like
// resources/list (lists.go); skills/get answers from the view; a skill file's
// resources/read and a skill directory's resources/directory/read go to the skill's
// server with the URI it listed, and come back with the URIs the client knows. A file
// the skill's entry lists with a digest is checked against it: bytes that do not match
// what the upstream listed (and integrity pinned) never reach the client.

// getSkill answers skills/get from the session's view.
func (dp *Dispatcher) getSkill(ctx context.Context, s *session.Session, m *wire.Msg, out Outbox) {
	p, err := reqparams.Read(m.Params)
	if err != nil || p.URI == "" {
		msg := "Invalid params: skills/get needs a uri"
		if err != nil {
			msg = "Invalid params: " + err.Error()
		}
		_ = out.Reply(wire.Error(m.ID, wire.CodeInvalidParams, msg, nil))
		return
	}
	// As a list: what the session's own instances serve, not the catalogue the server
	// was probed for (a per_session server's may be older than its instance's).
	s.Upstreams.AwaitCatalogs(ctx)
	sk := s.View().Skill(p.URI)
	if sk == nil {
		_ = out.Reply(wire.Error(m.ID, wire.CodeInvalidParams, "Invalid params: unknown skill: "+p.URI, map[string]string{"uri": p.URI}))
		return
	}
	var b wire.Object
	b.Raw("skill", sk.Def)
	_ = out.Reply(wire.Result(m.ID, b.Bytes()))
}

// skillRequest forwards resources/read of a skill's file, or resources/directory/read of
// a skill's directory, to the skill's server. It reports false when uri is not inside a
// skill of the view (resources/read then goes on as for any resource).
func (dp *Dispatcher) skillRequest(ctx context.Context, s *session.Session, m *wire.Msg, p reqparams.Routed, out Outbox) bool {
	if _, _, ok := registry.SplitSkillURI(p.URI); ok {
		s.Upstreams.AwaitCatalogs(ctx) // the entry the read is checked against is the instance's
	}
	sk, up := s.View().SkillOf(p.URI)
	if sk == nil {
		return false
	}
	meta, tok, err := dp.rewriteMeta(p.Meta)
	if err != nil {
		_ = out.Reply(wire.Error(m.ID, wire.CodeInvalidParams, "Invalid params: _meta "+err.Error(), nil))
		return true
	}
	var b wire.Object
	b.Str("uri", up)
	if p.Cursor != "" {
		b.Str("cursor", p.Cursor)
	}
	b.Raw("_meta", meta)
	b.Raw("inputResponses", p.InputResponses)
	b.Raw("requestState", p.RequestState)
	c := &upstreamCall{s: s, m: m, server: sk.Server, method: m.Method, params: b.Bytes(), prog: tok, out: out}
	key := "contents"
	if m.Method == "resources/directory/read" {
		key = "resources"
	}
	c.rewrite = func(res []byte) ([]byte, error) { return skillResult(sk, key, res) }
	dp.forward(ctx, c)
	return true
}

// directoryRead answers resources/directory/read: a directory of a skill of the view, or
// -32602 (the extension's answer for a URI that is not a directory it serves).
func (dp *Dispatcher) directoryRead(ctx context.Context, s *session.Session, m *wire.Msg, out Outbox) {
	p, err := reqparams.Read(m.Params)
	if err != nil || p.URI == "" {
		msg := "Invalid params: resources/directory/read needs a uri"
		if err != nil {
			msg = "Invalid params: " + err.Error()
		}
		_ = out.Reply(wire.Error(m.ID, wire.CodeInvalidParams, msg, nil))
		return
	}
	if !dp.skillRequest(ctx, s, m, p, out) {
		_ = out.Reply(wire.Error(m.ID, wire.CodeInvalidParams, "Invalid params: not a skill directory: "+p.URI, map[string]string{"uri": p.URI}))
	}
}

// skillResult rewrites the upstream's result for the client: the uri of every member of
// its list key (contents of a read, resources of a directory) renamed, and each content
// of a file the skill lists checked against the listed digest and size.
func skillResult(sk *registry.Skill, key string, res []byte) ([]byte, error) {
	var items []map[string]json.RawMessage
	var b wire.Object
	var werr error
	err := wire.Members(res, func(k string, v []byte) error {
		if k != key {
			b.Raw(k, v)
			return nil
		}
		if err := json.Unmarshal(v, &items); err != nil {
			return fmt.Errorf("its %s are not a list of objects", key)
		}
		for _, it := range items {
			var uri string
			if json.Unmarshal(it["uri"], &uri) != nil {
				continue
			}
			if key == "contents" {
				if werr = verifyContent(sk, uri, it); werr != nil {
					return werr
				}
			}
			it["uri"], _ = json.Marshal(registry.SkillURI(sk.Server, uri))
		}
		out, err := json.Marshal(items)
		if err != nil {
			return err
		}
		b.Raw(k, out)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("upstream %q answered a skill request wrongly: %w", sk.Server, err)
	}
	return b.Bytes(), nil
}

// verifyContent checks one content of a read against what the skill's entry lists for
// its uri (nothing to check for a file it does not list, or a dynamic skill).
func verifyContent(sk *registry.Skill, uri string, it map[string]json.RawMessage) error {
	want, ok := sk.Digests()[uri]
	if !ok {
		return nil
	}
	var body []byte
	if t, ok := it["text"]; ok {
		var s string
		if json.Unmarshal(t, &s) != nil {
			return fmt.Errorf("%s: text is not a string", uri)
		}
		body = []byte(s)
	} else if bl, ok := it["blob"]; ok {
		if json.Unmarshal(bl, &body) != nil { // base64, as encoding/json reads []byte
			return fmt.Errorf("%s: blob is not base64", uri)
		}
	} else {
		return nil
	}
	sum := sha256.Sum256(body)
	if got := "sha256:" + hex.EncodeToString(sum[:]); got != want.Digest || (want.Size >= 0 && int64(len(body)) != want.Size) {
		return fmt.Errorf("%s: the content (%d bytes, %s) is not what the skill lists (%d bytes, %s)", uri, len(body), got, want.Size, want.Digest)
	}
	return nil
}
