// Command taskpeer is a small MCP server that implements the Tasks extension
// (io.modelcontextprotocol/tasks, SEP-2663) on the 2026-07-28 revision's stateless
// streamable HTTP wire, with the fixtures the conformance suite's tasks-* scenarios call
// (greet, slow_compute, failing_job, protocol_error_job, confirm_delete, multi_input,
// test_tool_with_task). No upstream the tests otherwise run implements the extension, so
// this peer is what the suite judges directly and what mcpgw federates when the same suite
// judges it (test/e2e/conformance_tasks_test.go).
//
// It is a peer, not a mock: it keeps the revision's rules as a server must (version and
// routing headers, per-request _meta and capabilities, -32021 for what a caller did not
// declare, multi round-trip input before a task exists) and holds its tasks as the
// extension says (durable before CreateTaskResult, input_required with every outstanding
// request, partial tasks/update, cooperative cancel, a TTL after which tasks are
// discarded). Tasks are bearer objects: their ids are 128 random bits, and the peer has no
// authentication to bind them to.
//
//	taskpeer -http 127.0.0.1:PORT
//
// serves POST /mcp (any path) on that loopback address until SIGTERM or SIGINT.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	addr := flag.String("http", "127.0.0.1:0", "the loopback address to listen on")
	flag.Parse()
	if err := run(*addr); err != nil {
		fmt.Fprintln(os.Stderr, "taskpeer:", err)
		os.Exit(1)
	}
}

func run(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("-http %s: only a loopback address is served", addr)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	logger := log.New(os.Stderr, "taskpeer: ", log.Ltime|log.Lmicroseconds)
	p := newPeer(logger)
	defer p.tasks.closeAll()
	srv := &http.Server{
		Handler:           p,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       60 * time.Second,
		ErrorLog:          logger,
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	logger.Printf("listening on http://%s/mcp", l.Addr())
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}
