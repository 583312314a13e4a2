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
