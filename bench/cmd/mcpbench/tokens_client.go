package main

// T1's MCP client: JSON-RPC requests whose answers are read whole and parsed (the load
// client of client.go only checks that a result came), over client.go's sessions. An
// answer may come as application/json or as an event stream; both are read.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Names of the gateway's own tools in the thin and search forms (naming.separator "__").
const (
	searchToolName   = "mcpgw__search_tools"
	describeToolName = "mcpgw__describe_tools"
)

// rpcMessage is one JSON-RPC message as T1 reads it.
type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// rpc sends a request with this id, method and params, and returns its result as sent.
func (s *session) rpc(ctx context.Context, id int64, method string, params any) (json.RawMessage, error) {
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	st, hdr, err := s.do(ctx, body, &buf)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	if st != http.StatusOK {
		return nil, fmt.Errorf("%s: HTTP %d: %.300s", method, st, buf.Bytes())
	}
	m, err := answerOf(buf.Bytes(), hdr.Get("Content-Type"), id)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	if m.Error != nil {
		return nil, fmt.Errorf("%s: error %d: %s", method, m.Error.Code, m.Error.Message)
	}
	return m.Result, nil
}

// answerOf finds the answer to request id in a response body: the body itself
// (application/json) or the data of one of its events (text/event-stream), where
// notifications and requests of the server may come first.
func answerOf(body []byte, contentType string, id int64) (rpcMessage, error) {
	want := strconv.FormatInt(id, 10)
	if !strings.HasPrefix(contentType, "text/event-stream") {
		var m rpcMessage
		if err := json.Unmarshal(body, &m); err != nil {
			return m, fmt.Errorf("answer is not JSON: %v: %.200s", err, body)
		}
		return m, nil
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	var data []byte
	flush := func() (rpcMessage, bool) {
		defer func() { data = data[:0] }()
		var m rpcMessage
		if len(data) == 0 || json.Unmarshal(data, &m) != nil {
			return m, false
		}
		return m, string(m.ID) == want && (m.Result != nil || m.Error != nil)
	}
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			if m, ok := flush(); ok {
				return m, nil
			}
			continue
		}
		if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(d, []byte(" "))...)
		}
	}
	if m, ok := flush(); ok {
		return m, nil
	}
	return rpcMessage{}, fmt.Errorf("no answer to request %s in the event stream: %.300s", want, body)
}

// listedTools is a whole tools/list: every page's result as sent, and the tools' names.
type listedTools struct {
	Pages []json.RawMessage
	Names []string
}

// listAll reads tools/list page by page, following nextCursor.
func (s *session) listAll(ctx context.Context, ids *int64) (listedTools, error) {
	var out listedTools
	cursor := ""
	for page := 0; page < 1000; page++ {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		*ids++
		res, err := s.rpc(ctx, *ids, "tools/list", params)
		if err != nil {
			return out, err
		}
		var p struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		if err := json.Unmarshal(res, &p); err != nil {
			return out, fmt.Errorf("tools/list page %d: %v", page+1, err)
		}
		out.Pages = append(out.Pages, res)
		for _, t := range p.Tools {
			out.Names = append(out.Names, t.Name)
		}
		if cursor = p.NextCursor; cursor == "" {
			return out, nil
		}
	}
	return out, fmt.Errorf("tools/list: more than 1000 pages")
}

// callTool calls a tool and returns its result; a result with isError is an error.
func (s *session) callTool(ctx context.Context, id int64, name string, args json.RawMessage) (json.RawMessage, error) {
	res, err := s.rpc(ctx, id, "tools/call", map[string]any{"name": name, "arguments": args})
	if err != nil {
		return nil, err
	}
	var r struct {
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, fmt.Errorf("tools/call %s: result: %v", name, err)
	}
	if r.IsError {
		return res, fmt.Errorf("tools/call %s: isError: %.300s", name, res)
	}
	return res, nil
}

// searchTools calls the search form's tool and returns its result and the names of the
// tools it found, best first. limit 0 leaves the gateway's default.
func (s *session) searchTools(ctx context.Context, id int64, query string, limit int) (json.RawMessage, []string, error) {
	args := map[string]any{"query": query}
	if limit > 0 {
		args["limit"] = limit
	}
	a, err := json.Marshal(args)
	if err != nil {
		return nil, nil, err
	}
	res, err := s.callTool(ctx, id, searchToolName, a)
	if err != nil {
		return nil, nil, err
	}
	return res, foundNames(res), nil
}

// foundNames reads the tool names of a search result (structuredContent.tools, best first).
func foundNames(result json.RawMessage) []string {
	var r struct {
		StructuredContent struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"structuredContent"`
	}
	if json.Unmarshal(result, &r) != nil {
		return nil
	}
	names := make([]string, 0, len(r.StructuredContent.Tools))
	for _, t := range r.StructuredContent.Tools {
		names = append(names, t.Name)
	}
	return names
}
