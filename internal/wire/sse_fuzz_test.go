package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

// FuzzSSEEventBounds checks the SSE reader on any stream, any limit and any way the stream
// arrives in pieces: it agrees with refSSE, a plain reading of the format over the whole
// input; no event is over the limit; and every event it reads, written again with
// AppendEvent, reads back the same.
//
// (FuzzSSEReader in wire_fuzz_test.go checks round trips from AppendEvent's side; this
// one is named apart so that -fuzz FuzzSSEReader still matches one target.)
func FuzzSSEEventBounds(f *testing.F) {
	for _, s := range []string{
		"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n",
		"event: message\nid: s1-0\ndata: {}\n\n",
		"event: endpoint\r\ndata: /message?sessionId=abc\r\n\r\n",
		"id: 1\rretry: 1000\rdata: x\r\r",
		"data: a\r\ndata: b\rdata: c\n\n",
		"data:\ndata:\ndata:\n\n",
		": keep-alive\n\n",
		"data: no blank line\n",
		"data: no line end",
		"retry: 99999999999999999999\ndata: x\n\n",
		"field-without-colon\nid\n\n",
		"data:  two spaces\n\n",
		"data: " + strings.Repeat("x", 300) + "\n\n",
		strings.Repeat("data: 0123456789\n", 40) + "\n",
		strings.Repeat("id: 1\n", 100) + "\n",
		"data: \x00\xff\n\n",
		"\r\n\r\n\n\r",
		"",
	} {
		f.Add([]byte(s), uint16(64), uint8(0))
		f.Add([]byte(s), uint16(4096), uint8(3))
	}
	f.Fuzz(func(t *testing.T, stream []byte, limit uint16, chunking uint8) {
		max := int(limit) + 1
		want, wantErr := refSSE(stream, max)

		// Whole, and in pieces of 1 to 16 bytes.
		for _, src := range []io.Reader{bytes.NewReader(stream), &chunkReader{b: stream, step: chunking}} {
			got, err := readAll(NewSSEReader(src, max))
			switch {
			case wantErr == nil && err != io.EOF:
				t.Fatalf("read %d events then %v; the format gives %d events", len(got), err, len(want))
			case wantErr != nil && !errors.Is(err, ErrEventTooLarge):
				t.Fatalf("read %d events then %v; the format gives %d events then an event over %d bytes", len(got), err, len(want), max)
			}
			if len(got) != len(want) {
				t.Fatalf("read %d events, the format gives %d:\n got  %+v\n want %+v", len(got), len(want), got, want)
			}
			for i, ev := range got {
				w := want[i]
				if ev.ID != w.ID || ev.Name != w.Name || ev.Retry != w.Retry || !bytes.Equal(ev.Data, w.Data) {
					t.Fatalf("event %d = %+v, the format gives %+v", i, ev, w)
				}
				if n := len(ev.Data) + len(ev.ID) + len(ev.Name); n > max {
					t.Fatalf("event %d carries %d bytes, over the limit %d", i, n, max)
				}
			}
		}

		// Written again, each event reads back the same (JSON data compacted, as
		// AppendEvent does). An event with neither data nor id is not written.
		for _, ev := range want {
			if len(ev.Data) == 0 && ev.ID == "" {
				continue
			}
			data := ev.Data
			if bytes.IndexByte(data, '\n') >= 0 {
				var c bytes.Buffer
				if json.Compact(&c, data) == nil {
					data = c.Bytes()
				}
			}
			b := AppendEvent(nil, ev.ID, ev.Name, ev.Data)
			back, err := readAll(NewSSEReader(bytes.NewReader(b), len(b)))
			if err != io.EOF || len(back) != 1 {
				t.Fatalf("%+v written as %q reads back as %+v, %v", ev, b, back, err)
			}
			if g := back[0]; g.ID != ev.ID || g.Name != ev.Name || !bytes.Equal(g.Data, data) {
				t.Fatalf("%+v written as %q reads back as %+v", ev, b, g)
			}
		}
	})
}

// chunkReader returns its bytes in pieces of 1 to 16 bytes, sizes cycling from step.
type chunkReader struct {
	b    []byte
	step uint8
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	c.step++
	n := min(len(p), len(c.b), 1+int(c.step%16))
	copy(p, c.b[:n])
	c.b = c.b[n:]
	return n, nil
}

// refSSE reads an event stream the plain way: split into lines (CRLF, LF or CR), an
// unterminated last line dropped, fields applied, events dispatched by blank lines and an
// unfinished event dropped at the end. It applies the reader's limit as its documentation
// states it: an event's data (lines joined with newlines), id and name, plus one byte for
// each line that is not data, may not exceed max, and no line may be longer than what the
// event may still carry plus lineSlack. overErr is non-nil where the reader must stop
// with ErrEventTooLarge.
func refSSE(stream []byte, max int) (evs []Event, overErr error) {
	var ev Event
	var data []byte
	hasData, size := false, 0
	for {
		i := bytes.IndexAny(stream, "\r\n")
		line := stream
		if i >= 0 {
			line = stream[:i]
		}
		if len(line) > max-size+lineSlack {
			return evs, ErrEventTooLarge
		}
		if i < 0 {
			return evs, nil // the end; an unfinished line and event are dropped
		}
		if stream[i] == '\r' && i+1 < len(stream) && stream[i+1] == '\n' {
			i++
		}
		stream = stream[i+1:]

		if len(line) == 0 {
			if len(data) > 0 || ev.ID != "" || ev.Retry > 0 {
				ev.Data = data
				evs = append(evs, ev)
			}
			ev, data, hasData, size = Event{}, nil, false, 0
			continue
		}
		field, value, _ := strings.Cut(string(line), ":")
		value = strings.TrimPrefix(value, " ")
		if field == "data" {
			if hasData {
				size++
			}
			size += len(value)
		} else {
			size += 1 + len(value)
		}
		if size > max {
			return evs, ErrEventTooLarge
		}
		switch field {
		case "data":
			if hasData {
				data = append(data, '\n')
			}
			data = append(data, value...)
			if data == nil {
				data = []byte{}
			}
			hasData = true
		case "id":
			ev.ID = value
		case "event":
			ev.Name = value
		case "retry":
			if value != "" && len(value) <= 9 && strings.Trim(value, "0123456789") == "" {
				n := 0
				for _, c := range value {
					n = n*10 + int(c-'0')
				}
				if n <= 86400000 {
					ev.Retry = n
				}
			}
		}
	}
}
