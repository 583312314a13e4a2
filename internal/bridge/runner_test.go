package bridge

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/runnerlink"
)

// TestDialRunnerKeepsFramesSentWithTheUpgrade: a gateway that opens a stream at once (a
// session waits for this executor's runner) may send its first frame in the same write as
// the 101. The runner keeps those bytes for the link instead of dropping the connection
// (it used to answer "gateway spoke before the runner" and retry, and a gateway with a
// waiting session dropped it again on every try).
func TestDialRunnerKeepsFramesSentWithTheUpgrade(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	frame := []byte("\x00\x00\x00\x05\x01\x00\x00\x00\x07hello")
	served := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			served <- err
			return
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		req, err := http.ReadRequest(bufio.NewReader(c))
		if err != nil {
			served <- err
			return
		}
		if req.Header.Get("Upgrade") != runnerlink.Protocol || req.Header.Get("Mcpgw-Executor") != "box" {
			served <- io.ErrUnexpectedEOF
			return
		}
		// The answer and the first frame in one write.
		_, err = c.Write(append([]byte("HTTP/1.1 101 Switching Protocols\r\nUpgrade: "+runnerlink.Protocol+"\r\nConnection: Upgrade\r\n\r\n"), frame...))
		served <- err
		_, _ = io.Copy(io.Discard, c) // until the runner closes
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := dialRunner(ctx, RunnerOptions{Gateway: "http://" + ln.Addr().String(), Executor: "box", Token: "k"})
	if err != nil {
		t.Fatalf("dialRunner: %v", err)
	}
	defer conn.Close()
	if err := <-served; err != nil {
		t.Fatalf("the fake gateway: %v", err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	got := make([]byte, len(frame))
	if _, err := io.ReadFull(conn, got); err != nil || string(got) != string(frame) {
		t.Fatalf("the link's first bytes: %q, %v; want the frame sent with the upgrade %q", got, err, frame)
	}
}
