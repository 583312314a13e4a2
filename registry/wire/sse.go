package wire

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
)

// Event is one server-sent event.
type Event struct {
	ID    string
	Name  string // the "event:" field; empty means "message"
	Data  []byte
	Retry int // milliseconds, 0 if absent
}

// SSEReader reads server-sent events from a stream.
type SSEReader struct {
	r   *bufio.Reader
	max int
}

// NewSSEReader reads events from r. maxLine bounds one line (and so one data field).
func NewSSEReader(r io.Reader, maxLine int) *SSEReader {
	if maxLine <= 0 {
		maxLine = 16 << 20
	}
	return &SSEReader{r: bufio.NewReaderSize(r, 64<<10), max: maxLine}
}

// Next returns the next event, or io.EOF at the end of the stream. Events with no data and
// no id are skipped (comments, keep-alives).
func (s *SSEReader) Next() (Event, error) {
	var ev Event
	var data bytes.Buffer
	seen := false
	for {
		line, err := s.readLine()
		if len(line) == 0 && err != nil {
			if seen && (data.Len() > 0 || ev.ID != "") {
				ev.Data = data.Bytes()
				return ev, nil
			}
			return ev, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			if seen && (data.Len() > 0 || ev.ID != "" || ev.Retry > 0) {
				ev.Data = data.Bytes()
				return ev, nil
			}
			ev, seen = Event{}, false
			data.Reset()
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		seen = true
		switch string(field) {
		case "data":
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.Write(value)
		case "id":
			ev.ID = string(value)
		case "event":
			ev.Name = string(value)
		case "retry":
			ev.Retry, _ = strconv.Atoi(string(value))
		}
	}
}

// ErrLineTooLong is returned for a line over the reader's limit.
var ErrLineTooLong = errors.New("event stream line over the size limit")

func (s *SSEReader) readLine() ([]byte, error) {
	var line []byte
	for {
		chunk, err := s.r.ReadSlice('\n')
		if len(line)+len(chunk) > s.max {
			return nil, ErrLineTooLong
		}
		line = append(line, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		return line, err
	}
}

// AppendEvent appends one SSE event carrying the JSON message data to b. A message with
// line breaks (pretty-printed by an upstream) is compacted onto one data line.
func AppendEvent(b []byte, id, name string, data []byte) []byte {
	if bytes.IndexByte(data, '\n') >= 0 || bytes.IndexByte(data, '\r') >= 0 {
		var c bytes.Buffer
		if json.Compact(&c, data) == nil {
			data = c.Bytes()
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
	b = append(b, data...)
	return append(b, '\n', '\n')
}
