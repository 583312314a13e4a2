package httpclient

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// readHead reads the answer's head, after any interim (1xx) ones, and decides how its body
// is framed. What is ambiguous is refused (docs/decisions.md, "What the upstream HTTP
// client refuses"): Content-Length given twice with different values, or not as digits;
// Transfer-Encoding other than one "chunked", or in an HTTP/1.0 answer; a 101; a field
// name or value net/http would refuse; more than maxInterim interim answers. An answer
// with both Content-Length and chunked is read as chunked, and its connection closed.
func (r *Response) readHead(keep, known string) error {
	br := r.c.br
	total := 0
	for interim := 0; ; interim++ {
		line, err := readHeadLine(br, &total)
		if err != nil {
			return fmt.Errorf("read response: %w", err)
		}
		status, http11, ok := parseStatusLine(line)
		if !ok {
			return fmt.Errorf("malformed status line %q", truncate(line))
		}
		h := head{keep: keep, known: known}
		if err := h.readFields(br, &total); err != nil {
			return err
		}
		r.Status, r.EventStream, r.Kept, r.Challenges = status, h.eventStream, h.kept, h.challenges
		if h.sawTE && !http11 {
			// RFC 9112 6.1: the framing of such a message is faulty.
			return errors.New("Transfer-Encoding in an HTTP/1.0 answer")
		}
		if status == 101 {
			return errors.New("unexpected 101 Switching Protocols")
		}
		if status < 200 {
			// 1xx informational answers (100 Continue, 103 Early Hints) precede the real one.
			if interim == maxInterim {
				return fmt.Errorf("more than %d informational (1xx) answers", maxInterim)
			}
			continue
		}
		r.frame(&h, http11)
		return nil
	}
}

// maxChallenges bounds the WWW-Authenticate fields kept of one answer.
const maxChallenges = 8

// head is what the header fields of one answer head say about the answer.
type head struct {
	keep  string // the lower-case name of the field to keep
	known string // its value as the caller has it, kept rather than copied when unchanged

	eventStream   bool
	kept          string
	challenges    []string // WWW-Authenticate
	length        int64    // Content-Length, when lengthDigits > 0
	lengthDigits  int      // how it was written: "2" and "02" are two values
	chunked       bool
	sawTE         bool
	close, keepOn bool // Connection: close, keep-alive
}

// readFields reads header lines up to the empty line that ends the head.
func (h *head) readFields(br *bufio.Reader, total *int) error {
	for {
		line, err := readHeadLine(br, total)
		if err != nil {
			return fmt.Errorf("read response headers: %w", err)
		}
		if len(line) == 0 {
			return nil
		}
		i := bytes.IndexByte(line, ':')
		if i <= 0 || !isToken(line[:i]) {
			return fmt.Errorf("malformed header line %q", truncate(line))
		}
		val, ok := fieldValue(line[i+1:])
		if !ok {
			return fmt.Errorf("malformed header line %q", truncate(line))
		}
		if err := h.field(line[:i], val); err != nil {
			return err
		}
	}
}

// field takes in one header field: the ones that frame the body (and are refused when
// ambiguous), the media type, Connection and the field the request asked to keep.
func (h *head) field(name, val []byte) error {
	switch {
	case asciiEqualFold(name, "content-type"):
		h.eventStream = hasMediaType(val, "text/event-stream")
	case asciiEqualFold(name, "content-length"):
		n, ok := parseLength(val)
		if !ok {
			return fmt.Errorf("malformed Content-Length %q", truncate(val))
		}
		if h.lengthDigits > 0 && (n != h.length || len(val) != h.lengthDigits) {
			return errors.New("two different Content-Length values")
		}
		h.length, h.lengthDigits = n, len(val)
	case asciiEqualFold(name, "transfer-encoding"):
		if h.sawTE {
			return errors.New("Transfer-Encoding given more than once")
		}
		h.sawTE = true
		if !asciiEqualFold(val, "chunked") {
			return fmt.Errorf("unsupported Transfer-Encoding %q", truncate(val))
		}
		h.chunked = true
	case asciiEqualFold(name, "connection"):
		h.close = h.close || containsToken(val, "close")
		h.keepOn = h.keepOn || containsToken(val, "keep-alive")
	case asciiEqualFold(name, "trailer"):
		if containsToken(val, "content-length") || containsToken(val, "transfer-encoding") || containsToken(val, "trailer") {
			return fmt.Errorf("the Trailer field %q names a field that frames the message", truncate(val))
		}
	case asciiEqualFold(name, "www-authenticate"):
		if len(h.challenges) < maxChallenges {
			h.challenges = append(h.challenges, string(val))
		}
	case h.keep != "" && asciiEqualFold(name, h.keep):
		if string(val) == h.known {
			h.kept = h.known
		} else {
			h.kept = string(val)
		}
	}
	return nil
}

// frame decides how the final answer's body is framed, and whether its connection can
// carry another request.
func (r *Response) frame(h *head, http11 bool) {
	r.reusable = !h.close && (http11 || h.keepOn)
	r.chunked = false
	switch {
	case r.Status == 204 || r.Status == 304:
		// No body, whatever the head says; a head that says otherwise is not trusted
		// with another request.
		r.length = 0
		if h.chunked || h.length > 0 {
			r.reusable = false
		}
	case h.chunked:
		// RFC 9112 6.3: chunked wins over Content-Length, and the connection is not
		// reused.
		r.chunked, r.length = true, -1
		if h.lengthDigits > 0 {
			r.reusable = false
		}
	case h.lengthDigits > 0:
		r.length = h.length
	default:
		r.length = -1
		r.reusable = false // the body runs to the end of the connection
	}
}

// parseStatusLine reads "HTTP/1.x NNN[ reason]".
func parseStatusLine(line []byte) (status int, http11, ok bool) {
	if len(line) < 12 || string(line[:7]) != "HTTP/1." || line[7] != '0' && line[7] != '1' ||
		line[8] != ' ' || len(line) > 12 && line[12] != ' ' {
		return 0, false, false
	}
	for _, c := range line[9:12] {
		if c < '0' || c > '9' {
			return 0, false, false
		}
		status = status*10 + int(c-'0')
	}
	return status, line[7] == '1', status >= 100
}

// parseLength reads a Content-Length: digits only, at most 2^63-1.
func parseLength(v []byte) (int64, bool) {
	if len(v) == 0 {
		return 0, false
	}
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := int64(c - '0')
		if n > (1<<63-1-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

func truncate(b []byte) []byte {
	if len(b) > 80 {
		return b[:80]
	}
	return b
}

// readHeadLine returns one line without its CRLF (or bare LF), borrowed from br's buffer.
func readHeadLine(br *bufio.Reader, total *int) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	*total += len(line)
	if err != nil {
		if err == bufio.ErrBufferFull {
			return nil, errors.New("header line too long")
		}
		if err == io.EOF && len(line) == 0 {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	if *total > maxHeaderBytes {
		return nil, errors.New("response head too large")
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

func hasMediaType(val []byte, mt string) bool {
	if i := bytes.IndexByte(val, ';'); i >= 0 {
		val = val[:i]
	}
	return asciiEqualFold(trimOWS(val), mt)
}

func containsToken(val []byte, tok string) bool {
	for len(val) > 0 {
		var part []byte
		if i := bytes.IndexByte(val, ','); i >= 0 {
			part, val = val[:i], val[i+1:]
		} else {
			part, val = val, nil
		}
		if asciiEqualFold(trimOWS(part), tok) {
			return true
		}
	}
	return false
}
