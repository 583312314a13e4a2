// Package runnerlink is the wire between the gateway and a runner (mcpgw-bridge runner):
// one long-lived connection, opened by the runner and upgraded from HTTP/1.1, that carries
// the stdio servers the gateway asks the runner to start, multiplexed by stream id. It
// knows frames, streams and liveness, not MCP: a stream's data frames are the JSON-RPC
// lines of one server process, passed through as bytes (docs/runners.md).
package runnerlink

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Protocol is the Upgrade token of the runner connection.
const Protocol = "mcpgw-runner/1"

// Frame types. The gateway opens and closes streams and sends pings; the runner answers
// opens, sends what its processes write, and says when one ends.
const (
	frameOpen   byte = 1 // gateway → runner: start a server (payload: Spec as JSON)
	frameOpened byte = 2 // runner → gateway: the server started
	frameData   byte = 3 // both: one JSON-RPC message (no newline)
	frameClose  byte = 4 // both: the stream ended (payload: why, as text; empty from the gateway)
	frameStderr byte = 5 // runner → gateway: one stderr line of the server
	framePing   byte = 6 // gateway → runner (stream 0)
	framePong   byte = 7 // runner → gateway (stream 0)
)

// headerLen is a frame's header: length (4, of what follows it), type (1), stream (4).
const headerLen = 9

// ErrFrameTooLarge is a frame over the link's bound: the link is ended, since the rest of
// the connection cannot be read in step.
var ErrFrameTooLarge = errors.New("runner link: frame larger than the bound")

// frame is one decoded frame; payload aliases the reader's buffer until the next read.
type frame struct {
	typ     byte
	stream  uint32
	payload []byte
}

// appendFrame appends one frame to b.
func appendFrame(b []byte, typ byte, stream uint32, payload []byte) []byte {
	var h [headerLen]byte
	binary.BigEndian.PutUint32(h[0:4], uint32(len(payload)+5))
	h[4] = typ
	binary.BigEndian.PutUint32(h[5:9], stream)
	b = append(b, h[:]...)
	return append(b, payload...)
}

// frameReader reads frames of at most max payload bytes, reusing one buffer.
type frameReader struct {
	r   io.Reader
	max int
	buf []byte
}

// next reads one frame. A frame over the bound, or a length shorter than a header, is an
// error that ends the link.
func (fr *frameReader) next() (frame, error) {
	var h [headerLen]byte
	if _, err := io.ReadFull(fr.r, h[:]); err != nil {
		return frame{}, err
	}
	n := binary.BigEndian.Uint32(h[0:4])
	if n < 5 {
		return frame{}, fmt.Errorf("runner link: frame length %d shorter than its header", n)
	}
	size := int64(n) - 5
	if size > int64(fr.max) {
		return frame{}, fmt.Errorf("%w (%d > %d bytes)", ErrFrameTooLarge, size, fr.max)
	}
	if int64(cap(fr.buf)) < size {
		fr.buf = make([]byte, size)
	}
	p := fr.buf[:size]
	if _, err := io.ReadFull(fr.r, p); err != nil {
		return frame{}, err
	}
	if cap(fr.buf) > 1<<20 && size < 64<<10 {
		// One large message does not keep its buffer for ever.
		fr.buf = nil
	}
	return frame{typ: h[4], stream: binary.BigEndian.Uint32(h[5:9]), payload: p}, nil
}

// Spec is what a runner starts: one stdio server, with the environment the resolved
// policy gives it (the server's env and the executor's env_injection; the runner adds its
// own environment beneath).
type Spec struct {
	Name    string            `json:"name"`
	Command string            `json:"command"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Dir     string            `json:"dir,omitempty"`
}
