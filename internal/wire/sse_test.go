package wire

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

func benchStream(n int, msg string) []byte {
	var b []byte
	for i := 0; i < n; i++ {
		b = AppendEvent(b, "s1-"+strings.Repeat("7", 3), "message", []byte(msg))
	}
	return b
}

// BenchmarkSSEReader reads a stream of typical answers: one event per message, as the
// streamable HTTP transport does for every call.
func BenchmarkSSEReader(b *testing.B) {
	for _, c := range []struct {
		name string
		msg  string
	}{
		{"small", `{"jsonrpc":"2.0","id":17,"result":{"content":[{"type":"text","text":"hello"}]}}`},
		{"20KiB", `{"jsonrpc":"2.0","id":17,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 20<<10) + `"}]}}`},
	} {
		b.Run(c.name+"/stream", func(b *testing.B) {
			stream := benchStream(100, c.msg)
			b.SetBytes(int64(len(stream)))
			b.ReportAllocs()
			rd := bytes.NewReader(stream)
			for i := 0; i < b.N; i++ {
				rd.Reset(stream)
				r := NewSSEReader(rd, 1<<20)
				for {
					if _, err := r.Next(); err != nil {
						if err != io.EOF {
							b.Fatal(err)
						}
						break
					}
				}
			}
		})
		b.Run(c.name+"/one", func(b *testing.B) {
			stream := benchStream(1, c.msg)
			b.SetBytes(int64(len(stream)))
			b.ReportAllocs()
			rd := bytes.NewReader(stream)
			for i := 0; i < b.N; i++ {
				rd.Reset(stream)
				r := NewSSEReader(rd, 1<<20)
				if _, err := r.Next(); err != nil {
					b.Fatal(err)
				}
				if _, err := r.Next(); err != io.EOF {
					b.Fatal(err)
				}
			}
		})
	}
}

// readAll reads events until an error and returns them with that error.
func readAll(r *SSEReader) ([]Event, error) {
	var evs []Event
	for {
		ev, err := r.Next()
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}

func sameEvents(t *testing.T, got, want []Event) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d events %+v, want %d %+v", len(got), got, len(want), want)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.ID != w.ID || g.Name != w.Name || g.Retry != w.Retry || string(g.Data) != string(w.Data) {
			t.Fatalf("event %d = %+v (data %q), want %+v (data %q)", i, g, g.Data, w, w.Data)
		}
	}
}

// TestSSEReaderBoundsEvent: the limit holds for a whole event, not only for one line. An
// upstream sent 20,000 data lines of 900 bytes, which made one 18 MB event under a 16 MiB
// line limit.
func TestSSEReaderBoundsEvent(t *testing.T) {
	const max = 16 << 20
	line := "data: " + strings.Repeat("x", 900) + "\n"
	stream := strings.Repeat(line, 20000) + "\n" + "data: {}\n\n"
	r := NewSSEReader(strings.NewReader(stream), max)
	ev, err := r.Next()
	if !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("an event of %d bytes under a %d-byte limit: got %d bytes, err %v; want ErrEventTooLarge",
			20000*901-1, max, len(ev.Data), err)
	}
	if !strings.Contains(err.Error(), "16777216") {
		t.Fatalf("error %q does not say the limit", err)
	}
	// The stream is not resynchronised: the reader keeps failing.
	if _, err2 := r.Next(); err2 != err {
		t.Fatalf("after the error: %v, want the same error", err2)
	}
}

// TestSSEReaderBoundsManyLines: lines that carry little or nothing still count, so that
// an event cannot grow without end out of empty data lines, ids or comments.
func TestSSEReaderBoundsManyLines(t *testing.T) {
	const max = 1024
	for name, line := range map[string]string{
		"empty data": "data:\n",
		"data space": "data: \n",
		"ids":        "id: 1\n",
		"retries":    "retry: 5\n",
		"unknown":    "x\n",
		"comments":   ":\n",
	} {
		t.Run(name, func(t *testing.T) {
			r := NewSSEReader(strings.NewReader(strings.Repeat(line, 2*max)+"\n"), max)
			ev, err := r.Next()
			if !errors.Is(err, ErrEventTooLarge) {
				t.Fatalf("%d lines of %q: event of %d data bytes, err %v; want ErrEventTooLarge", 2*max, line, len(ev.Data), err)
			}
		})
	}
}

// TestSSEReaderLimitExact: the limit counts the data, id and event name an event carries
// plus one byte for each line that carries no data; an event at the limit is read.
func TestSSEReaderLimitExact(t *testing.T) {
	const max = 100
	for _, tt := range []struct {
		name   string
		stream string
		ok     bool
	}{
		{"data at the limit", "data: " + strings.Repeat("a", max) + "\n\n", true},
		{"data over the limit", "data: " + strings.Repeat("a", max+1) + "\n\n", false},
		{"two data lines at the limit", "data: " + strings.Repeat("a", 50) + "\ndata: " + strings.Repeat("b", 49) + "\n\n", true},
		{"two data lines over the limit", "data: " + strings.Repeat("a", 50) + "\ndata: " + strings.Repeat("b", 50) + "\n\n", false},
		{"id, name and data at the limit", "event: ab\nid: cd\ndata: " + strings.Repeat("a", max-6) + "\n\n", true},
		{"id, name and data over the limit", "event: ab\nid: cd\ndata: " + strings.Repeat("a", max-5) + "\n\n", false},
		{"unterminated line over the limit", "data: " + strings.Repeat("a", max+lineSlack+1), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			evs, err := readAll(NewSSEReader(strings.NewReader(tt.stream), max))
			if tt.ok && (err != io.EOF || len(evs) != 1) {
				t.Fatalf("got %d events, %v; want one event and io.EOF", len(evs), err)
			}
			if !tt.ok && !errors.Is(err, ErrEventTooLarge) {
				t.Fatalf("got %d events, %v; want ErrEventTooLarge", len(evs), err)
			}
		})
	}
	// The limit is per event: many events of nearly the limit are all read.
	ev := "data: " + strings.Repeat("a", max) + "\n\n"
	evs, err := readAll(NewSSEReader(strings.NewReader(strings.Repeat(ev, 1000)), max))
	if err != io.EOF || len(evs) != 1000 {
		t.Fatalf("1000 events at the limit: read %d, %v", len(evs), err)
	}
}

// TestSSEReaderOversizedEventMemory: refusing an oversized event does not buffer it first.
func TestSSEReaderOversizedEventMemory(t *testing.T) {
	const max = 1 << 20
	line := "data: " + strings.Repeat("x", 900) + "\n"
	stream := strings.Repeat(line, 20000) + "\n"
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := NewSSEReader(strings.NewReader(stream), max).Next()
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("err %v, want ErrEventTooLarge", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 4*max {
		t.Fatalf("refusing an event over %d bytes allocated %d bytes", max, got)
	}
}

// TestSSEReaderLineEnds: CRLF, LF and a lone CR all end a line, in any mix.
func TestSSEReaderLineEnds(t *testing.T) {
	lf := "event: endpoint\ndata: /message?sessionId=1\n\n" +
		": comment\n" +
		"id: a-1\nretry: 1500\ndata: {\"x\":1}\n\n" +
		"data: one\ndata: two\n\n" +
		"data:\ndata: after an empty line\n\n"
	want := []Event{
		{Name: "endpoint", Data: []byte("/message?sessionId=1")},
		{ID: "a-1", Retry: 1500, Data: []byte(`{"x":1}`)},
		{Data: []byte("one\ntwo")},
		{Data: []byte("\nafter an empty line")},
	}
	mixed := func(s string) string { // cycle through the three line ends
		var b strings.Builder
		ends := []string{"\r", "\r\n", "\n"}
		for i, l := range strings.Split(s, "\n") {
			if i > 0 {
				b.WriteString(ends[i%3])
			}
			b.WriteString(l)
		}
		return b.String()
	}
	for name, stream := range map[string]string{
		"LF":    lf,
		"CRLF":  strings.ReplaceAll(lf, "\n", "\r\n"),
		"CR":    strings.ReplaceAll(lf, "\n", "\r"),
		"mixed": mixed(lf),
	} {
		for rname, rd := range map[string]func(string) io.Reader{
			"whole":     func(s string) io.Reader { return strings.NewReader(s) },
			"bytewise":  func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) },
			"half-read": func(s string) io.Reader { return iotest.HalfReader(strings.NewReader(s)) },
		} {
			t.Run(name+"/"+rname, func(t *testing.T) {
				evs, err := readAll(NewSSEReader(rd(stream), 0))
				if err != io.EOF {
					t.Fatalf("end: %v, want io.EOF", err)
				}
				sameEvents(t, evs, want)
			})
		}
	}
}

// TestSSEReaderCRDoesNotWait: an event ended by CRs is returned at once; the reader does
// not wait for a byte after the CR to see whether it is a LF.
func TestSSEReaderCRDoesNotWait(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	go pw.Write([]byte("data: x\r\r"))
	got := make(chan error, 1)
	r := NewSSEReader(pr, 0)
	go func() {
		ev, err := r.Next()
		if err == nil && string(ev.Data) != "x" {
			err = fmt.Errorf("data %q, want x", ev.Data)
		}
		got <- err
	}()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("an event ended by CR CR was not returned until more input came")
	}
	// A LF right after the CR belongs to it: it is not a blank line.
	go pw.Write([]byte("\ndata: y\r\n\r\n"))
	if ev, err := r.Next(); err != nil || string(ev.Data) != "y" {
		t.Fatalf("next event: %q, %v; want y", ev.Data, err)
	}
}

// TestSSEReaderDropsUnfinishedEvent: an event is dispatched by a blank line only; at the
// end of the stream an unfinished event is dropped.
func TestSSEReaderDropsUnfinishedEvent(t *testing.T) {
	for _, stream := range []string{
		"data: a\n\ndata: tail",
		"data: a\n\ndata: tail\n",
		"data: a\n\nid: 7\ndata: tail\r\n",
		"data: a\n\nid: 7\r",
		"data: a\r\rdata: tail\r",
	} {
		evs, err := readAll(NewSSEReader(strings.NewReader(stream), 0))
		if err != io.EOF {
			t.Fatalf("%q: end %v, want io.EOF", stream, err)
		}
		sameEvents(t, evs, []Event{{Data: []byte("a")}})
	}
	// A stream broken off mid-event gives the error, not the event.
	broken := io.MultiReader(strings.NewReader("data: part"), iotest.ErrReader(io.ErrUnexpectedEOF))
	if ev, err := NewSSEReader(broken, 0).Next(); err != io.ErrUnexpectedEOF {
		t.Fatalf("broken stream: %+v, %v; want io.ErrUnexpectedEOF", ev, err)
	}
}

// TestSSEReaderDataIsCallers: an event's data stays as it was while later events are
// read, across the reader's buffer being reused, grown and given back.
func TestSSEReaderDataIsCallers(t *testing.T) {
	var stream []byte
	var want []Event
	for i, n := range []int{10, 40 << 10, 10, 100 << 10, 3, 17 << 10} {
		d := []byte(strings.Repeat(string(rune('a'+i)), n))
		stream = AppendEvent(stream, fmt.Sprint(i), "", d)
		want = append(want, Event{ID: fmt.Sprint(i), Data: d})
	}
	evs, err := readAll(NewSSEReader(iotest.HalfReader(bytes.NewReader(stream)), 1<<20))
	if err != io.EOF {
		t.Fatal(err)
	}
	sameEvents(t, evs, want)
}

// TestSSEReaderFields: field parsing details of the format.
func TestSSEReaderFields(t *testing.T) {
	in := "data:no space\n\n" +
		"data:  two spaces\n\n" +
		"data\ndata\n\n" + // a field with no colon has an empty value
		"event:message\ndata: 1\n\n" +
		"retry: 99999999999999999999\ndata: 2\n\n" + // not a sane retry: ignored
		"retry: -5\ndata: 3\n\n" +
		"retry: 1e3\ndata: 4\n\n" +
		"retry: 250\n\n" +
		"id\ndata: 5\n\n" +
		"unknown: field\ndata: 6\n\n"
	evs, err := readAll(NewSSEReader(strings.NewReader(in), 0))
	if err != io.EOF {
		t.Fatal(err)
	}
	sameEvents(t, evs, []Event{
		{Data: []byte("no space")},
		{Data: []byte(" two spaces")},
		{Data: []byte("\n")},
		{Name: "message", Data: []byte("1")},
		{Data: []byte("2")},
		{Data: []byte("3")},
		{Data: []byte("4")},
		{Retry: 250},
		{Data: []byte("5")},
		{Data: []byte("6")},
	})
}

// TestSSEReaderNoProgress: a source that returns nothing, again and again, ends the stream.
func TestSSEReaderNoProgress(t *testing.T) {
	if _, err := NewSSEReader(zeroReader{}, 0).Next(); err != io.ErrNoProgress {
		t.Fatalf("err %v, want io.ErrNoProgress", err)
	}
}

type zeroReader struct{}

func (zeroReader) Read([]byte) (int, error) { return 0, nil }

// TestAppendEventKeepsFraming: data that is not JSON and has line breaks goes on several
// data lines, so that it cannot end the event or start another.
func TestAppendEventKeepsFraming(t *testing.T) {
	b := AppendEvent(nil, "1", "message", []byte("not json\n\ndata: injected\r\nmore\rend"))
	evs, err := readAll(NewSSEReader(bytes.NewReader(b), 0))
	if err != io.EOF {
		t.Fatal(err)
	}
	sameEvents(t, evs, []Event{{ID: "1", Name: "message", Data: []byte("not json\n\ndata: injected\nmore\nend")}})
}

// TestSSEReaderAllocs: reading an event of one data line allocates its data and id, and
// nothing else.
func TestSSEReaderAllocs(t *testing.T) {
	stream := benchStream(100, `{"jsonrpc":"2.0","id":17,"result":{"content":[{"type":"text","text":"hello"}]}}`)
	rd := bytes.NewReader(stream)
	n := testing.AllocsPerRun(20, func() {
		rd.Reset(stream)
		r := NewSSEReader(rd, 1<<20)
		for {
			if _, err := r.Next(); err != nil {
				break
			}
		}
	})
	// 2 an event, the reader, and its buffer when the pool has none to give.
	if n > 2*100+2 {
		t.Fatalf("%v allocations for 100 events, want at most 2 an event", n)
	}
}

// TestSSEReaderBufferEdges: lines and line ends that fall across the edge of the reader's
// buffer, where it slides and grows, read as the format says (refSSE).
func TestSSEReaderBufferEdges(t *testing.T) {
	for n := sseBufSize - 12; n <= sseBufSize+4; n++ {
		for _, end := range []string{"\n", "\r", "\r\n"} {
			var b strings.Builder
			for i := 0; i < 3; i++ {
				b.WriteString("data: " + strings.Repeat(string(rune('a'+i)), n-i) + end + end)
			}
			b.WriteString("id: x" + end + end)
			stream := []byte(b.String())
			want, werr := refSSE(stream, 1<<20)
			if werr != nil || len(want) != 4 {
				t.Fatalf("refSSE: %d events, %v", len(want), werr)
			}
			for name, rd := range map[string]io.Reader{
				"whole":  bytes.NewReader(stream),
				"halves": iotest.HalfReader(bytes.NewReader(stream)),
				"pieces": &chunkReader{b: stream, step: uint8(n)},
			} {
				got, err := readAll(NewSSEReader(rd, 1<<20))
				if err != io.EOF {
					t.Fatalf("n %d end %q %s: %v", n, end, name, err)
				}
				sameEvents(t, got, want)
			}
		}
	}
}
