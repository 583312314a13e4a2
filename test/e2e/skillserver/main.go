// Command skillserver is a test-only MCP server of the Skills extension (SEP-2640,
// io.modelcontextprotocol/skills): it serves the skills in a directory tree (each
// directory holding a SKILL.md with YAML frontmatter is a skill; the files below it are
// the skill's files) with skills/list, skills/get, resources/list, resources/read of
// skill:// URIs and resources/directory/read, over stdio (one JSON message a line) or,
// with -http ADDR, streamable HTTP at ADDR/mcp (JSON answers, no session). It serves the
// session revisions (initialize) and 2026-07-28 (server/discover, results with
// resultType, ttlMs and cacheScope).
//
// The tree is read again on every request, so a test changes a skill by writing its
// files; over stdio the server also sends notifications/resources/list_changed when the
// tree changes (checked every 100 ms). -many N adds N generated skills; -page N is the
// skills/list page size; -lie-digest lists every digest of other bytes than served.
//
// The end-to-end tests build it (go build ./skillserver) into a temporary directory.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// server answers requests from the tree under root.
type server struct {
	root string
	gen  []*skill // the -many generated skills, made once
	page int
	lie  bool
}

// request is one JSON-RPC message.
type request struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method"`
	Params struct {
		URI             string                     `json:"uri"`
		Cursor          string                     `json:"cursor"`
		ProtocolVersion string                     `json:"protocolVersion"`
		Meta            map[string]json.RawMessage `json:"_meta"`
	} `json:"params"`
}

// rpcError is a JSON-RPC error answer.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

const extID = "io.modelcontextprotocol/skills"

func main() {
	s := &server{}
	flag.StringVar(&s.root, "dir", "", "the directory of skills (required)")
	addr := flag.String("http", "", "serve streamable HTTP at this address instead of stdio")
	many := flag.Int("many", 0, "add this many generated skills")
	flag.IntVar(&s.page, "page", 2, "skills/list page size")
	flag.BoolVar(&s.lie, "lie-digest", false, "list digests of other bytes than served")
	flag.Parse()
	if s.root == "" || s.page < 1 {
		flag.Usage()
		os.Exit(2)
	}
	for i := range *many {
		s.gen = append(s.gen, generated(i))
	}
	if *addr != "" {
		os.Exit(s.serveHTTP(*addr))
	}
	s.serveStdio()
}

func (s *server) serveHTTP(addr string) int {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		stateless := r.Header.Get("MCP-Protocol-Version") == "2026-07-28"
		out := s.handle(body, stateless)
		if out == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func (s *server) serveStdio() {
	var mu sync.Mutex
	w := bufio.NewWriter(os.Stdout)
	write := func(b []byte) {
		mu.Lock()
		defer mu.Unlock()
		_, _ = w.Write(append(b, '\n'))
		_ = w.Flush()
	}
	go s.watch(write)
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<16), 1<<22)
	for sc.Scan() {
		if out := s.handle(sc.Bytes(), false); out != nil {
			write(out)
		}
	}
}

// watch sends notifications/resources/list_changed when the tree's skills change.
func (s *server) watch(write func([]byte)) {
	last := s.fingerprint()
	for range time.Tick(100 * time.Millisecond) {
		if fp := s.fingerprint(); fp != last {
			last = fp
			write([]byte(`{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`))
		}
	}
}

// fingerprint is the digest of the skills on disk (generated ones never change).
func (s *server) fingerprint() string {
	t, err := scan(s.root, nil)
	if err != nil {
		return "error: " + err.Error()
	}
	var b bytes.Buffer
	for _, sk := range t.Skills {
		b.Write(mustJSON(sk.entry(false)))
	}
	return digest(b.Bytes())
}

// handle answers one message; nil for a notification or a response.
func (s *server) handle(msg []byte, stateless bool) []byte {
	var req request
	if err := json.Unmarshal(msg, &req); err != nil {
		return mustJSON(map[string]any{"jsonrpc": "2.0", "id": nil, "error": rpcError{-32700, "Parse error"}})
	}
	if len(req.ID) == 0 || req.Method == "" {
		return nil
	}
	if _, ok := req.Params.Meta["io.modelcontextprotocol/protocolVersion"]; ok {
		stateless = true
	}
	res, rerr := s.answer(&req)
	if rerr != nil {
		return mustJSON(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": rerr})
	}
	if stateless {
		res["resultType"] = "complete"
		res["ttlMs"], res["cacheScope"] = 0, "public"
	}
	return mustJSON(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": res})
}

// capabilities are what the server declares.
func capabilities() map[string]any {
	return map[string]any{"resources": map[string]any{"listChanged": true},
		"extensions": map[string]any{extID: map[string]any{"directoryRead": true}}}
}

func serverInfo() map[string]any { return map[string]any{"name": "skillserver", "version": "1.0.0"} }

func (s *server) answer(req *request) (map[string]any, *rpcError) {
	switch req.Method {
	case "initialize":
		v := req.Params.ProtocolVersion
		if v != "2025-11-25" && v != "2025-06-18" && v != "2025-03-26" {
			v = "2025-11-25"
		}
		return map[string]any{"protocolVersion": v, "capabilities": capabilities(), "serverInfo": serverInfo()}, nil
	case "server/discover":
		return map[string]any{"supportedVersions": []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"},
			"capabilities": capabilities(), "_meta": map[string]any{"io.modelcontextprotocol/serverInfo": serverInfo()}}, nil
	case "ping":
		return map[string]any{}, nil
	}
	t, err := scan(s.root, s.gen)
	if err != nil {
		return nil, &rpcError{-32603, err.Error()}
	}
	switch req.Method {
	case "skills/list":
		return s.list(t, req.Params.Cursor)
	case "skills/get":
		for _, sk := range t.Skills {
			if sk.URI == req.Params.URI {
				return map[string]any{"skill": sk.entry(s.lie)}, nil
			}
		}
		return nil, &rpcError{-32602, "Invalid params: no skill " + req.Params.URI}
	case "resources/list":
		var out []map[string]any
		for _, sk := range t.Skills {
			for _, f := range sk.Files {
				out = append(out, t.resource(f))
			}
		}
		return map[string]any{"resources": out}, nil
	case "resources/templates/list":
		return map[string]any{"resourceTemplates": []any{}}, nil
	case "resources/read":
		f, ok := t.files[req.Params.URI]
		if !ok {
			return nil, &rpcError{-32602, "Resource not found: " + req.Params.URI}
		}
		return map[string]any{"contents": []map[string]any{{"uri": f.URI, "mimeType": f.MimeType, "text": string(f.Body)}}}, nil
	case "resources/directory/read":
		return s.directory(t, req.Params.URI)
	}
	return nil, &rpcError{-32601, "Method not found: " + req.Method}
}

// list is one page of skills/list.
func (s *server) list(t *tree, cursor string) (map[string]any, *rpcError) {
	start := 0
	if cursor != "" {
		n, err := strconv.Atoi(cursor)
		if err != nil || n < 0 || n > len(t.Skills) {
			return nil, &rpcError{-32602, "Invalid params: bad cursor"}
		}
		start = n
	}
	end := min(start+s.page, len(t.Skills))
	page := make([]map[string]any, 0, end-start)
	for _, sk := range t.Skills[start:end] {
		page = append(page, sk.entry(s.lie))
	}
	res := map[string]any{"skills": page}
	if end < len(t.Skills) {
		res["nextCursor"] = strconv.Itoa(end)
	}
	return res, nil
}

// directory lists the direct children of a directory of a skill.
func (s *server) directory(t *tree, uri string) (map[string]any, *rpcError) {
	children, ok := t.dirs[strings.TrimSuffix(uri, "/")]
	if !ok {
		return nil, &rpcError{-32602, "Invalid params: not a directory: " + uri}
	}
	out := make([]map[string]any, 0, len(children))
	for _, c := range children {
		if c.Dir {
			out = append(out, map[string]any{"uri": c.URI, "name": c.URI[strings.LastIndexByte(c.URI, '/')+1:], "mimeType": "inode/directory"})
		} else {
			out = append(out, t.resource(t.files[c.URI]))
		}
	}
	return map[string]any{"resources": out}, nil
}
