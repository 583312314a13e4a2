package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
)

// Event is one server-sent event.
type Event struct {
	ID    string
	Name  string // the "event:" field; empty means "message"
	Data  []byte
	Retry int // milliseconds, 0 if absent
}

// SSEReader reads server-sent events (the WHATWG event-stream format) from a stream.
//
// Lines end with CRLF, LF or a lone CR. An event is dispatched by the blank line that ends
// it; an event the stream leaves unfinished at its end is dropped, as the format says.
//
// One event is bounded as a whole, not only its lines: its size is the data, id and event
// name it carries (data lines joined by their newlines) plus one byte for each line that
// carries no data (id, event, retry, comment and unknown lines), so that neither many
// lines of data nor many empty lines can make it large. An event over the reader's
// limit ends the stream with an error wrapping ErrEventTooLarge.
type SSEReader struct {
	src  io.Reader
	max  int
	buf  []byte // buf[r:w] is read and not yet consumed
	r, w int
	scan int // buf[r:scan] holds no line end
	// skipLF: the last line ended with a CR, so a LF right after it belongs to that line.
	// It is looked at only when the next line is wanted, so that a CR-ended line never
	// waits for the byte after it.
	skipLF bool
	rerr   error // the source's error, returned once buf is drained
	fail   error // the error Next returned; every later call returns it too
}

// NewSSEReader reads events from r. max bounds one event's size (see SSEReader), and so
// also one line; 0 or less means 16 MiB.
func NewSSEReader(r io.Reader, max int) *SSEReader {
	switch {
	case max <= 0:
		max = 16 << 20
	case max > math.MaxInt/2:
		max = math.MaxInt / 2 // room for lineSlack and a line end without overflow
	}
	return &SSEReader{src: r, max: max}
}

// ErrEventTooLarge is wrapped by the error Next returns for an event over the reader's
// limit. The stream cannot be resynchronised after it: the caller abandons it.
var ErrEventTooLarge = errors.New("event stream: event over the size limit")

// ErrLineTooLong is the old name of ErrEventTooLarge.
//
// Deprecated: use ErrEventTooLarge.
var ErrLineTooLong = ErrEventTooLarge

// lineSlack is how much longer than the bytes it may still carry a line may be: the field
// name, colon and space of the longest known field ("event: ", "retry: ").
const lineSlack = 8

// Next returns the next event, or the stream's error (io.EOF at its end). Events with no
// data, id or retry are skipped (comments, keep-alives). Data is the caller's: it is not
// touched by later calls. After an error, Next returns the same error again.
func (s *SSEReader) Next() (Event, error) {
	if s.fail != nil {
		return Event{}, s.fail
	}
	var ev Event
	var data []byte
	hasData := false
	size := 0 // of the event so far, as the type's comment counts it
	for {
		line, err := s.readLine(s.max - size + lineSlack)
		if err != nil {
			return Event{}, s.stop(err)
		}
		if len(line) == 0 {
			if len(data) > 0 || ev.ID != "" || ev.Retry > 0 {
				ev.Data = data
				return ev, nil
			}
			ev, data, hasData, size = Event{}, nil, false, 0
			continue
		}
		var field, value []byte
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		} else {
			field = line
		}
		if string(field) == "data" {
			if hasData {
				size++ // the newline that joins it to the data before
			}
			size += len(value)
		} else {
			size += 1 + len(value)
		}
		if size > s.max {
			return Event{}, s.stop(s.tooLarge())
		}
		switch string(field) {
		case "data":
			if !hasData {
				data = append([]byte(nil), value...) // the common case: one data line, one allocation
				hasData = true
				break
			}
			if n := len(data) + 1 + len(value); n > cap(data) {
				// Double rather than append's gentler growth for large slices: an event
				// of many data lines costs at most twice its size in allocations.
				grown := make([]byte, len(data), min(max(2*cap(data), n), s.max))
				copy(grown, data)
				data = grown
			}
			data = append(data, '\n')
			data = append(data, value...)
		case "id":
			ev.ID = string(value)
		case "event":
			switch string(value) {
			case "message":
				ev.Name = "message"
			case "endpoint":
				ev.Name = "endpoint"
			default:
				ev.Name = string(value)
			}
		case "retry":
			if n, ok := retryValue(value); ok {
				ev.Retry = n
			}
		}
	}
}

func (s *SSEReader) tooLarge() error {
	return fmt.Errorf("%w (%d bytes)", ErrEventTooLarge, s.max)
}

// stop makes err the reader's last word and lets go of its buffer.
func (s *SSEReader) stop(err error) error {
	s.fail = err
	if cap(s.buf) == sseBufSize {
		b := s.buf[:sseBufSize]
		ssePool.Put(&b)
	}
	s.buf, s.r, s.w, s.scan = nil, 0, 0, 0
	return err
}

// retryValue reads a retry field: ASCII digits only, as the format says; values past a
// day are ignored rather than overflowing a duration.
func retryValue(v []byte) (int, bool) {
	if len(v) == 0 || len(v) > 9 {
		return 0, false
	}
	n := 0
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, n <= 24*60*60*1000
}

// sseBufSize is the read buffer a reader starts with; buffers of that size are pooled,
// since the streamable HTTP transport makes a reader for every answer. Longer lines grow
// the buffer up to the line bound.
const sseBufSize = 16 << 10

var ssePool = sync.Pool{New: func() any { b := make([]byte, sseBufSize); return &b }}

// readLine returns the next line without its line end, of at most limit bytes: a slice of
// the reader's buffer, valid until the next call. At the end of the source it returns the
// source's error and drops an unterminated last line.
func (s *SSEReader) readLine(limit int) ([]byte, error) {
	for {
		if s.skipLF && s.r < s.w {
			if s.buf[s.r] == '\n' {
				s.r++
			}
			s.skipLF = false
			s.scan = max(s.scan, s.r)
		}
		if !s.skipLF {
			b := s.buf[s.scan:s.w]
			i := bytes.IndexByte(b, '\n')
			if i >= 0 {
				b = b[:i]
			}
			if j := bytes.IndexByte(b, '\r'); j >= 0 {
				i = j
			}
			if i >= 0 {
				end := s.scan + i
				line := s.buf[s.r:end]
				s.skipLF = s.buf[end] == '\r'
				s.r, s.scan = end+1, end+1
				if len(line) > limit {
					return nil, s.tooLarge()
				}
				return line, nil
			}
			s.scan = s.w
			if s.w-s.r > limit {
				return nil, s.tooLarge()
			}
		}
		if s.rerr != nil {
			return nil, s.rerr
		}
		s.fill(limit)
	}
}

// fill reads more of the source into the buffer, making room for a line of limit bytes
// and its line end.
func (s *SSEReader) fill(limit int) {
	switch {
	case s.buf == nil:
		s.buf = *ssePool.Get().(*[]byte)
	case s.r == s.w:
		s.r, s.w, s.scan = 0, 0, 0
		if len(s.buf) > sseBufSize {
			// Done with a long line: do not keep its buffer for the life of the stream.
			s.buf = *ssePool.Get().(*[]byte)
		}
	case s.w == len(s.buf) && s.r > 0:
		n := copy(s.buf, s.buf[s.r:s.w])
		s.w, s.scan, s.r = n, s.scan-s.r, 0
	}
	if s.w == len(s.buf) {
		// The pending line fills the buffer (and is at most limit bytes, or readLine
		// would have stopped): grow it, no further than limit and a line end need.
		n := min(max(2*len(s.buf), sseBufSize), limit+1)
		if n <= s.w {
			n = s.w + 1
		}
		nb := make([]byte, n)
		copy(nb, s.buf[:s.w])
		if cap(s.buf) == sseBufSize {
			b := s.buf[:sseBufSize]
			ssePool.Put(&b)
		}
		s.buf = nb
	}
	for range 100 {
		n, err := s.src.Read(s.buf[s.w:])
		if n < 0 || n > len(s.buf)-s.w {
			s.rerr = errors.New("event stream: source returned an invalid count")
			return
		}
		s.w += n
		if err != nil {
			s.rerr = err
			return
		}
		if n > 0 {
			return
		}
	}
	s.rerr = io.ErrNoProgress
}

// AppendEvent appends one SSE event carrying the JSON message data to b. A message with
// line breaks (pretty-printed by an upstream) is compacted onto one data line; data that
// still has line breaks (not JSON) goes on one data line per line, so that no break can
// end the event early. id and name are the gateway's own and must hold no line break.
func AppendEvent(b []byte, id, name string, data []byte) []byte {
	breaks := bytes.IndexByte(data, '\n') >= 0 || bytes.IndexByte(data, '\r') >= 0
	if breaks {
		var c bytes.Buffer
		if json.Compact(&c, data) == nil {
			data, breaks = c.Bytes(), false
		}
	}
	if name != "" {
		b = append(b, "event: "...)
		b = append(b, name...)
		b = append(b, '\n')
	}
	if id != "" {
		b = append(b, "id: "...)
		b = append(b, id...)
		b = append(b, '\n')
	}
	b = append(b, "data: "...)
	for breaks {
		i := bytes.IndexAny(data, "\r\n")
		if i < 0 {
			break
		}
		b = append(b, data[:i]...)
		b = append(b, "\ndata: "...)
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
	b = append(b, data...)
	return append(b, '\n', '\n')
}
