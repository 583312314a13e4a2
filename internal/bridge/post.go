package bridge

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/mcpgw/mcpgw/internal/wire"
)

// post sends one message and writes what comes back; settle runs once the answer to a
// request is on stdout.
func (b *Bridge) post(m *wire.Msg, line []byte, settle func()) error {
	req, gen, err := b.newRequest(b.ctx, http.MethodPost, line)
	if err != nil {
		return err
	}
	if m.Method == "initialize" {
		req.Header.Del("Mcp-Session-Id")
		req.Header.Del("MCP-Protocol-Version")
	}
	resp, err := b.client.Do(req)
	if err != nil {
		if !isDialError(err) && b.ctx.Err() == nil {
			// Sent, or partly: the connection broke before an answer came.
			return fmt.Errorf("%w: %v", errNoAnswer, err)
		}
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound && req.Header.Get("Mcp-Session-Id") != "" {
		return &sessionLost{gen: gen}
	}
	if m.Method == "initialize" && resp.StatusCode == http.StatusOK {
		b.mu.Lock()
		b.sid = resp.Header.Get("Mcp-Session-Id")
		b.mu.Unlock()
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case resp.StatusCode == http.StatusAccepted:
		b.answerFailed(m, "mcpgw-bridge: the gateway accepted the request (HTTP 202) without answering it", settle)
		return nil
	case ct == "text/event-stream":
		return b.relayStream(m, resp.Body, settle)
	default:
		return b.relayBody(m, resp, settle)
	}
}

// answerFailed answers a request (not a notification or a response) with a connection
// error: the gateway took it but gave no JSON-RPC answer.
func (b *Bridge) answerFailed(m *wire.Msg, text string, settle func()) {
	if m.ID != nil && m.Method != "" {
		b.writeThen(wire.Error(m.ID, wire.CodeConnection, text, nil), settle)
	}
}

// relayStream writes every event of an SSE answer; the one that answers m settles it.
func (b *Bridge) relayStream(m *wire.Msg, body io.Reader, settle func()) error {
	rd := wire.NewSSEReader(body, b.o.MaxMessage)
	answered := m.ID == nil
	for {
		ev, err := rd.Next()
		if err != nil {
			if !answered {
				return errNoAnswer
			}
			return nil
		}
		if len(bytes.TrimSpace(ev.Data)) == 0 {
			continue
		}
		if !answered {
			if mm, err := wire.Parse(ev.Data); err == nil && mm.IsResponse() && string(mm.ID) == string(m.ID) {
				answered = true
				b.deliver(m, ev.Data, settle)
				continue
			}
		}
		b.deliver(m, ev.Data, nil)
	}
}

// relayBody writes a plain answer: a JSON-RPC message as it is, anything else as an error
// answer that says what the gateway sent.
func (b *Bridge) relayBody(m *wire.Msg, resp *http.Response, settle func()) error {
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(b.o.MaxMessage)))
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		b.answerFailed(m, fmt.Sprintf("mcpgw-bridge: the gateway answered HTTP %d with no body", resp.StatusCode), settle)
		return nil
	}
	if body[0] != '{' && body[0] != '[' {
		b.answerFailed(m, fmt.Sprintf("mcpgw-bridge: the gateway answered HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(body))), settle)
		return nil
	}
	// An error answer without the request's id (HTTP-level refusals) gets it back.
	if mm, err := wire.Parse(body); err == nil && mm.IsResponse() && mm.ID == nil && m.ID != nil {
		body = wire.RawError(m.ID, mm.Error)
	}
	b.deliver(m, body, settle)
	return nil
}

func (b *Bridge) newRequest(ctx context.Context, method string, body []byte) (*http.Request, int, error) {
	req, err := http.NewRequestWithContext(ctx, method, b.url, bytes.NewReader(body))
	if err != nil {
		return nil, 0, err
	}
	h := req.Header
	if method == http.MethodPost {
		h.Set("Content-Type", "application/json")
		h.Set("Accept", "application/json, text/event-stream")
	} else {
		h.Set("Accept", "text/event-stream")
	}
	for k, v := range map[string]string{"X-Agent-ID": b.o.Agent, "X-Conversation-ID": b.o.Conversation, "X-Task-ID": b.o.Task, "X-Executor-ID": b.o.Executor} {
		if v != "" {
			h.Set(k, v)
		}
	}
	if b.o.Token != "" {
		h.Set("Authorization", "Bearer "+b.o.Token)
	}
	b.mu.Lock()
	sid, ver, gen := b.sid, b.version, b.gen
	b.mu.Unlock()
	if sid != "" {
		h.Set("Mcp-Session-Id", sid)
	}
	if ver != "" {
		h.Set("MCP-Protocol-Version", ver)
	}
	return req, gen, nil
}
