package upstream

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"
)

// silentServerEnv makes the test binary a stdio MCP server of the session revision that
// answers initialize and says nothing at all to any other request (server/discover
// included), where the protocol asks for a method-not-found error. With the value
// "exit" it exits on such a request instead, as a strict server might.
const silentServerEnv = "MCPGW_TEST_SILENT_SERVER"

func silentServer() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	for in.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(in.Bytes(), &m) != nil || m.Method != "initialize" {
			if len(m.ID) > 0 && os.Getenv(silentServerEnv) == "exit" {
				os.Exit(3)
			}
			continue
		}
		fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"silent","version":"1"}}}`+"\n", m.ID)
	}
}

// TestDiscoverProbeFallsBack: a stdio upstream dialed with protocol_version auto that
// never answers server/discover is initialized on the session revision once the probe
// ends, well within the connect timeout, instead of failing to start at its end.
func TestDiscoverProbeFallsBack(t *testing.T) {
	d := NewDialer()
	d.DiscoverProbe = 200 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := d.Dial(ctx, Options{Name: "silent", Transport: "stdio", Command: os.Args[0],
		Env: map[string]string{silentServerEnv: "1"}, ProtocolVersion: AutoVersion,
		ConnectTimeout: 20 * time.Second, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer c.Close()
	if c.Stateless || c.ProtocolVersion != SessionVersion {
		t.Fatalf("stateless %v, version %q: want the session revision after the probe", c.Stateless, c.ProtocolVersion)
	}
}

// TestDiscoverExitStartsAgain: a stdio upstream that exits on server/discover is started
// again and initialized on the session revision.
func TestDiscoverExitStartsAgain(t *testing.T) {
	d := NewDialer()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := d.Dial(ctx, Options{Name: "strict", Transport: "stdio", Command: os.Args[0],
		Env: map[string]string{silentServerEnv: "exit"}, ProtocolVersion: AutoVersion,
		ConnectTimeout: 20 * time.Second, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer c.Close()
	if c.Stateless || c.ProtocolVersion != SessionVersion {
		t.Fatalf("stateless %v, version %q: want the session revision", c.Stateless, c.ProtocolVersion)
	}
	if _, err := c.Request(ctx, "ping", nil); err == nil {
		t.Fatal("the strict server answered ping: it should have exited on it (the test server is wrong)")
	}
}
