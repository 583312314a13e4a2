// size: being split (issue 41)
package httpclient

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"
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

// ReadBody reads the whole body (at most limit bytes) and lets the connection go.
func (r *Response) ReadBody(limit int64) ([]byte, error) {
	switch {
	case r.length == 0:
		r.done()
		return nil, nil
	case r.length > 0:
		if r.length > limit {
			r.fail()
			return nil, fmt.Errorf("response of %d bytes is over the limit of %d", r.length, limit)
		}
		buf := make([]byte, r.length)
		if _, err := io.ReadFull(r.c.br, buf); err != nil {
			r.fail()
			return nil, r.readErr(err)
		}
		r.done()
		return buf, nil
	}
	body := r.Body().(*bodyReader) // holds the connection from here on
	buf, err := io.ReadAll(io.LimitReader(body, limit+1))
	if err == nil && int64(len(buf)) > limit {
		err = fmt.Errorf("response is over the limit of %d bytes", limit)
	}
	if err != nil {
		body.r.fail()
		return nil, body.r.readErr(err)
	}
	body.Close()
	return buf, nil
}

func (r *Response) readErr(err error) error {
	if e := ctxErr(r.ctx, r.deadline, err); e != nil {
		return e
	}
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Discard lets the connection go without the body: a small remaining body is read so the
// connection can be reused, a large or open-ended one closes it.
func (r *Response) Discard() {
	if r.c == nil {
		return
	}
	if r.length >= 0 && r.length <= 4096 {
		if _, err := r.c.br.Discard(int(r.length)); err == nil {
			r.done()
			return
		}
	}
	r.fail()
}

// LetGoOfCtx detaches the exchange from the ctx given to RoundTrip: the body (an event
// stream) may outlive the call that asked for it and ends with the transport instead.
func (r *Response) LetGoOfCtx() {
	if r.deadline && r.c != nil {
		_ = r.c.nc.SetDeadline(time.Time{})
		r.deadline = false
	}
	r.ctx = context.Background()
}

// Body returns the body as a stream; closing it lets the connection go (back to the pool
// if the body was read to its end).
// The body takes the exchange over: r must not be used afterwards.
func (r *Response) Body() io.ReadCloser {
	b := &bodyReader{r: *r, left: r.length}
	if r.chunked {
		b.left = 0
	}
	r.c = nil
	return b
}

type bodyReader struct {
	r        Response
	left     int64 // bytes left in the body (length-delimited) or in the current chunk
	overhead int64 // chunked: what chunk lines carried beyond their allowance
	crlfDue  bool  // chunked: the CRLF after a chunk's data is still to be read
	eof      bool
	err      error
	closed   bool
}

func (b *bodyReader) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.eof {
		return 0, io.EOF
	}
	r := &b.r
	if r.c == nil {
		return 0, errors.New("read on a closed body")
	}
	br := r.c.br
	switch {
	case r.chunked:
		if b.crlfDue {
			if err := readCRLF(br); err != nil {
				b.err = r.readErr(err)
				return 0, b.err
			}
			b.crlfDue = false
		}
		if b.left == 0 {
			n, err := b.nextChunk()
			if err == nil && n == 0 {
				err = readTrailers(br)
			}
			if err != nil {
				b.err = r.readErr(err)
				return 0, b.err
			}
			if n == 0 {
				b.eof = true
				return 0, io.EOF
			}
			b.left = n
		}
		if int64(len(p)) > b.left {
			p = p[:b.left]
		}
		n, err := br.Read(p)
		b.left -= int64(n)
		if err != nil {
			b.err = r.readErr(err)
			return n, b.err
		}
		if b.left == 0 {
			// Each chunk's data ends with CRLF: read now if it is here, else next time
			// rather than wait for it with data in hand.
			if br.Buffered() >= 2 {
				if err := readCRLF(br); err != nil {
					b.err = r.readErr(err)
					return n, b.err
				}
			} else {
				b.crlfDue = true
			}
		}
		return n, nil
	case r.length >= 0:
		if b.left == 0 {
			b.eof = true
			return 0, io.EOF
		}
		if int64(len(p)) > b.left {
			p = p[:b.left]
		}
		n, err := br.Read(p)
		b.left -= int64(n)
		if err != nil {
			b.err = r.readErr(err)
		}
		return n, b.err
	default:
		n, err := br.Read(p)
		if err == io.EOF {
			b.eof = true
		} else if err != nil {
			b.err = r.readErr(err)
			err = b.err
		}
		return n, err
	}
}

// nextChunk reads a chunk-size line (RFC 9112 7.1, as strictly as net/http): CRLF and no
// other CR, at most maxChunkLine bytes, the size in 1 to 16 hex digits, extensions
// skipped, the lines' overhead bounded.
func (b *bodyReader) nextChunk() (int64, error) {
	line, err := b.r.c.br.ReadSlice('\n')
	if err != nil {
		if err == bufio.ErrBufferFull {
			return 0, errors.New("chunk line too long")
		}
		return 0, err
	}
	if len(line) > maxChunkLine {
		return 0, errors.New("chunk line too long")
	}
	if len(line) < 2 || line[len(line)-2] != '\r' {
		return 0, errors.New("malformed chunk line: it ends in a bare LF")
	}
	line = line[:len(line)-2]
	if bytes.IndexByte(line, '\r') >= 0 {
		return 0, errors.New("malformed chunk line: a CR inside")
	}
	b.overhead += int64(len(line)) + 2 // and the CRLF after the data
	// Trailing whitespace goes, leading does not (as net/http).
	size := line
	for len(size) > 0 && (size[len(size)-1] == ' ' || size[len(size)-1] == '\t') {
		size = size[:len(size)-1]
	}
	if i := bytes.IndexByte(size, ';'); i >= 0 {
		size = size[:i]
	}
	n, ok := parseChunkSize(size)
	if !ok {
		return 0, fmt.Errorf("malformed chunk size %q", truncate(size))
	}
	b.overhead = max(b.overhead-16-2*n, 0)
	if b.overhead > maxChunkOverhead {
		return 0, errors.New("chunked body carries too much non-data")
	}
	return n, nil
}

// parseChunkSize reads 1 to 16 hex digits, at most 2^62.
func parseChunkSize(v []byte) (int64, bool) {
	if len(v) == 0 || len(v) > 16 {
		return 0, false
	}
	var n int64
	for _, c := range v {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		if n > (1<<62)>>4 {
			return 0, false
		}
		n = n<<4 | int64(c)
	}
	return n, true
}

// readTrailers reads the trailer section after the last chunk: field lines ending in
// CRLF, at most maxTrailerBytes with the empty line that ends them.
func readTrailers(br *bufio.Reader) error {
	total := 0
	for {
		line, err := br.ReadSlice('\n')
		total += len(line)
		if err != nil {
			if err == bufio.ErrBufferFull {
				return errors.New("trailer section too long")
			}
			return err
		}
		if total > maxTrailerBytes {
			return errors.New("trailer section too long")
		}
		if len(line) < 2 || line[len(line)-2] != '\r' {
			return errors.New("malformed trailer: a line ends in a bare LF")
		}
		line = line[:len(line)-2]
		if len(line) == 0 {
			return nil
		}
		i := bytes.IndexByte(line, ':')
		if _, ok := fieldValue(line[i+1:]); i <= 0 || !isToken(line[:i]) || !ok {
			return fmt.Errorf("malformed trailer line %q", truncate(line))
		}
	}
}

func readCRLF(br *bufio.Reader) error {
	c, err := br.ReadByte()
	if err == nil && c == '\r' {
		c, err = br.ReadByte()
		if err == nil && c == '\n' {
			return nil
		}
	}
	if err != nil {
		return err
	}
	return errors.New("malformed chunk: no CRLF after its data")
}

func (b *bodyReader) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	if b.eof && b.err == nil {
		b.r.done()
	} else {
		b.r.fail()
	}
	return nil
}
