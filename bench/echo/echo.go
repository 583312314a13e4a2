// Package echo is a small, fast MCP server for benchmarks: hand-written JSON-RPC (no
// go-sdk), an "echo" tool that returns its arguments as text, and a tools/list of N
// generated tools that is serialized once. It serves streamable HTTP (JSON responses, no
// standalone GET stream) and newline-delimited stdio.
//
// It is deliberately cheap so that what a benchmark measures in front of it is the cost of
// whatever sits between the client and this server.
package echo

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
)

// Server is one echo MCP server. The zero value is not usable; call New.
type Server struct {
	list     []byte // tools/list result, serialized once
	sessions sync.Map
	pool     sync.Pool
}

// New returns a server whose tools/list has tools entries in total: "echo" and tools-1
// generated ones named tool_0001, tool_0002, …
func New(tools int) *Server {
	if tools < 1 {
		tools = 1
	}
	s := &Server{}
	s.pool.New = func() any { b := make([]byte, 0, 4096); return &b }
	var b bytes.Buffer
	b.WriteString(`{"tools":[`)
	b.WriteString(`{"name":"echo","description":"Returns its arguments as text.","inputSchema":{"type":"object","properties":{"text":{"type":"string","description":"Text to echo back."}}},"annotations":{"readOnlyHint":true}}`)
	for i := 1; i < tools; i++ {
		fmt.Fprintf(&b, `,{"name":"tool_%04d","description":"Generated benchmark tool number %d. It echoes its input and does nothing else.","inputSchema":{"type":"object","properties":{"text":{"type":"string","description":"Text to echo back."},"count":{"type":"integer","description":"How many times."}},"required":["text"]},"annotations":{"readOnlyHint":true}}`, i, i)
	}
	b.WriteString(`]}`)
	s.list = b.Bytes()
	return s
}

// ListBytes is the size of the serialized tools/list result.
func (s *Server) ListBytes() int { return len(s.list) }

type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

var supported = map[string]bool{"2025-11-25": true, "2025-06-18": true, "2025-03-26": true, "2024-11-05": true}

// handle answers one message, appending the response to dst. It returns dst unchanged for
// notifications and responses. newSession is set for initialize.
func (s *Server) handle(dst, msg []byte) (out []byte, isInit bool, err error) {
	var m envelope
	if err := json.Unmarshal(msg, &m); err != nil {
		return appendError(dst, nil, -32700, "Parse error"), false, err
	}
	if len(m.ID) == 0 || string(m.ID) == "null" {
		return dst, false, nil // notification or response: nothing to say
	}
	switch m.Method {
	case "tools/call":
		var p struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if json.Unmarshal(m.Params, &p) != nil || p.Name == "" {
			return appendError(dst, m.ID, -32602, "Invalid params"), false, nil
		}
		args := p.Arguments
		if len(args) == 0 {
			args = []byte("{}")
		}
		dst = appendHead(dst, m.ID)
		dst = append(dst, `{"content":[{"type":"text","text":`...)
		dst = AppendString(dst, args)
		return append(dst, `}]}}`...), false, nil
	case "tools/list":
		dst = appendHead(dst, m.ID)
		dst = append(dst, s.list...)
		return append(dst, '}'), false, nil
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(m.Params, &p)
		v := "2025-11-25"
		if supported[p.ProtocolVersion] {
			v = p.ProtocolVersion
		}
		dst = appendHead(dst, m.ID)
		dst = append(dst, `{"protocolVersion":"`...)
		dst = append(dst, v...)
		dst = append(dst, `","capabilities":{"tools":{}},"serverInfo":{"name":"mcpbench-echo","version":"1.0.0"}}}`...)
		return dst, true, nil
	case "ping":
		dst = appendHead(dst, m.ID)
		return append(dst, `{}}`...), false, nil
	default:
		return appendError(dst, m.ID, -32601, "Method not found: "+m.Method), false, nil
	}
}

func appendHead(dst []byte, id json.RawMessage) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	return append(dst, `,"result":`...)
}

func appendError(dst []byte, id json.RawMessage, code int, msg string) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"error":{"code":`...)
	dst = strconv.AppendInt(dst, int64(code), 10)
	dst = append(dst, `,"message":`...)
	dst = AppendString(dst, []byte(msg))
	return append(dst, `}}`...)
}

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string.
func AppendString(dst, s []byte) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// ServeHTTP is the streamable HTTP endpoint (any path).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
	case http.MethodDelete:
		if sid := r.Header.Get("Mcp-Session-Id"); sid != "" {
			s.sessions.Delete(sid)
		}
		w.WriteHeader(http.StatusOK)
		return
	default:
		w.Header().Set("Allow", "POST, DELETE")
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	bp := s.pool.Get().(*[]byte)
	defer s.pool.Put(bp)
	body, err := readBody((*bp)[:0], r)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	sid := r.Header.Get("Mcp-Session-Id")
	if sid != "" {
		if _, ok := s.sessions.Load(sid); !ok {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write(appendError(nil, nil, -32001, "Session not found"))
			return
		}
	}
	n := len(body)
	out, isInit, _ := s.handle(body, body)
	resp := out[n:]
	*bp = out[:0]
	h := w.Header()
	if len(resp) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if isInit {
		var id [16]byte
		_, _ = rand.Read(id[:])
		sid := hex.EncodeToString(id[:])
		s.sessions.Store(sid, struct{}{})
		h.Set("Mcp-Session-Id", sid)
	}
	h["Content-Type"] = contentJSON
	h["Content-Length"] = []string{strconv.Itoa(len(resp))}
	_, _ = w.Write(resp)
}

var contentJSON = []string{"application/json"}

func readBody(dst []byte, r *http.Request) ([]byte, error) {
	if r.ContentLength > 0 && r.ContentLength < 64<<20 {
		if cap(dst) < int(r.ContentLength) {
			dst = make([]byte, 0, r.ContentLength)
		}
		dst = dst[:r.ContentLength]
		_, err := io.ReadFull(r.Body, dst)
		return dst, err
	}
	buf := bytes.NewBuffer(dst)
	_, err := buf.ReadFrom(io.LimitReader(r.Body, 64<<20))
	return buf.Bytes(), err
}

// ServeStdio answers newline-delimited messages from in on out until in ends. Output is
// flushed whenever no more input is buffered, so a burst of requests leaves in few writes.
func (s *Server) ServeStdio(in io.Reader, out io.Writer) error {
	r := bufio.NewReaderSize(in, 1<<20)
	w := bufio.NewWriterSize(out, 256<<10)
	var resp []byte
	for {
		line, err := r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			big := append([]byte(nil), line...)
			for err == bufio.ErrBufferFull {
				line, err = r.ReadSlice('\n')
				big = append(big, line...)
			}
			line = big
		}
		if len(bytes.TrimSpace(line)) > 0 {
			resp, _, _ = s.handle(resp[:0], line)
			if len(resp) > 0 {
				_, _ = w.Write(append(resp, '\n'))
			}
		}
		if err != nil {
			_ = w.Flush()
			if err == io.EOF {
				return nil
			}
			return err
		}
		if r.Buffered() == 0 {
			if ferr := w.Flush(); ferr != nil {
				return ferr
			}
		}
	}
}
