package httpclient

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// FuzzH1ReadResponseAgreesWithNetHTTP reads the same bytes as an answer with the gateway's
// client and with net/http (http.ReadResponse, skipping interim answers as its Transport
// does). Where net/http refuses the answer, its head or its body, the gateway must refuse
// it too; where both accept it, the bodies must be equal, and a connection the gateway
// would pool must be one net/http would keep as well. The gateway may refuse more (see
// TestH1RefusesMisframedAnswers: HTTP/1.0 with Transfer-Encoding, a 101, folded lines).
func FuzzH1ReadResponseAgreesWithNetHTTP(f *testing.F) {
	for _, s := range h1FuzzSeeds() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want, keep, netErr := netHTTPRead(data)
		got, reusable, err := h1Read(data)
		switch {
		case netErr != nil && err == nil:
			t.Fatalf("net/http refuses (%v), the gateway reads %q", netErr, got)
		case netErr == nil && err == nil:
			if !bytes.Equal(got, want) {
				t.Fatalf("bodies differ: gateway %q, net/http %q", got, want)
			}
			if reusable && !keep {
				t.Fatalf("the gateway would pool a connection net/http would close (body %q)", got)
			}
		}
	})
}

// netHTTPRead is how net/http's client reads an answer to a POST: interim answers (1xx but
// 101) skipped, with the gateway's bound on their number, then the body read whole. keep
// says whether the connection could carry another request.
func netHTTPRead(data []byte) (body []byte, keep bool, err error) {
	br := bufio.NewReaderSize(bytes.NewReader(data), 4096) // net/http's read buffer
	req := &http.Request{Method: http.MethodPost}
	for i := 0; ; i++ {
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			return nil, false, err
		}
		if resp.StatusCode >= 100 && resp.StatusCode < 200 && resp.StatusCode != 101 {
			if i == maxInterim {
				return nil, false, errors.New("too many interim answers")
			}
			continue
		}
		body, err := io.ReadAll(resp.Body)
		return body, !resp.Close, err
	}
}

// h1Read reads data as the answer to a post, on a connection that reads data and then
// EOF.
func h1Read(data []byte) (body []byte, reusable bool, err error) {
	c := &Conn{nc: fuzzConn{}, br: bufio.NewReaderSize(bytes.NewReader(data), 16<<10), key: "fuzz"}
	r := Response{ep: &Endpoint{pool: &Pool{}}, c: c, tr: fuzzTracker{}, ctx: context.Background(), length: -1}
	if err := r.readHead("", ""); err != nil {
		r.fail()
		return nil, false, err
	}
	reusable = r.reusable
	b := r.Body()
	body, err = io.ReadAll(b)
	b.Close()
	return body, reusable, err
}

// fuzzTracker never gives the connection back, so done closes it instead of pooling it.
type fuzzTracker struct{}

func (fuzzTracker) Track(_ *Conn, _ any, add bool) bool { return add }
func (fuzzTracker) Abandoned(any) bool                  { return false }

type fuzzConn struct{}

func (fuzzConn) Read([]byte) (int, error)         { return 0, io.EOF }
func (fuzzConn) Write(b []byte) (int, error)      { return len(b), nil }
func (fuzzConn) Close() error                     { return nil }
func (fuzzConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (fuzzConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (fuzzConn) SetDeadline(time.Time) error      { return nil }
func (fuzzConn) SetReadDeadline(time.Time) error  { return nil }
func (fuzzConn) SetWriteDeadline(time.Time) error { return nil }

// h1FuzzSeeds are the attack cases of the tests, and ordinary answers.
func h1FuzzSeeds() []string {
	const hdr = "HTTP/1.1 200 OK\r\n"
	const chunked = hdr + "Transfer-Encoding: chunked\r\n\r\n"
	seeds := []string{
		hdr + "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
		hdr + "Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}",
		hdr + "Content-Length: \t 2 \t\r\n\r\n{}",
		chunked + "1;a=b;c=\"d\"\r\n{\r\n1\t \r\n}\r\n0\r\nX-T: 1\r\n\r\n",
		chunked + "0A\r\n0123456789\r\n000\r\n\r\n",
		hdr + "Transfer-Encoding: chunked\r\nTrailer: X-T\r\n\r\n2\r\n{}\r\n0\r\nX-T: 1\r\n\r\n",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n" + hdr + "Content-Length: 2\r\n\r\n{}",
		"HTTP/1.1 204 No Content\r\n\r\n",
		"HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n",
		"HTTP/1.0 200 OK\r\n\r\n{\"a\":1}",
		"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\n{}",
		"HTTP/1.0 200 OK\r\nConnection: close\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\n{}",
		hdr + "Connection: close\r\nContent-Length: 2\r\n\r\n{}",
		hdr + "Content-Type: text/event-stream\r\n\r\ndata: {}\n\n",
		hdr + "Content-Length: 2\r\n\r\n{}HTTP/1.1 200 OK\r\n",
		hdr + "Content-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
		"HTTP/1.1 204 No Content\r\nContent-Length: 2\r\n\r\n",
		"HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n",
		hdr + "Content-Length: 5\n\nhello",
	}
	// The refusals of TestH1MalformedAnswers and TestH1RefusesMisframedAnswers, short.
	seeds = append(seeds,
		"FOO/1.1 200 OK\r\n\r\n", "HTTP/1.1 2x0 OK\r\n\r\n", "HTTP/1.1 20\r\n\r\n", "HTTP/1.1 099 Odd\r\n\r\n",
		"HTTP/1.1-200 OK\r\n\r\n", hdr+"NoColonHere\r\n\r\n", hdr+": v\r\n\r\n",
		hdr+"Content-Length: 2\r\nContent-Length: 11\r\n\r\n{}HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}",
		hdr+"Content-Length: 2\r\nContent-Length: 02\r\n\r\n{}",
		hdr+"Content-Length: 2, 11\r\n\r\n{}", hdr+"Content-Length: +2\r\n\r\n{}", hdr+"Content-Length: -1\r\n\r\n{}",
		hdr+"Content-Length: \x0b2\r\n\r\n{}", hdr+"Content-Length: 1 1\r\n\r\n{}", hdr+"Content-Length: 0x2\r\n\r\n{}",
		hdr+"Content-Length: \r\n\r\n{}", hdr+"Content-Length: 9223372036854775808\r\n\r\n{}",
		hdr+"Transfer-Encoding: chunked\r\nContent-Length: +5\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
		hdr+"Content-Length : 11\r\n\r\n{}", hdr+"X-A: 1\r\n Content-Length: 2\r\n\r\n{}",
		hdr+"X-A: a\x00b\r\nContent-Length: 2\r\n\r\n{}", hdr+"X-A: a\rContent-Length: 11\r\nContent-Length: 2\r\n\r\n{}",
		hdr+"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
		hdr+"Transfer-Encoding: identity\r\nContent-Length: 2\r\n\r\n{}",
		hdr+"Transfer-Encoding: gzip, chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
		"HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n{}",
		hdr+"Transfer-Encoding: chunked\r\nTrailer: X-A, content-length\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
		"HTTP/1.1 2000 OK\r\nContent-Length: 2\r\n\r\n{}", "HTTP/1.9 200 OK\r\nContent-Length: 2\r\n\r\n{}",
		"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n{}",
		strings.Repeat("HTTP/1.1 102 Processing\r\n\r\n", maxInterim+1)+hdr+"Content-Length: 2\r\n\r\n{}",
		chunked+"1;"+strings.Repeat("e", 4096)+"\r\nX\r\n0\r\n\r\n",
		chunked+strings.Repeat("1;"+strings.Repeat("x", 100)+"\r\nX\r\n", 200)+"0\r\n\r\n",
		chunked+"1\r\nX\r\n0\r\n"+strings.Repeat("X-T: "+strings.Repeat("t", 100)+"\r\n", 41)+"\r\n",
		chunked+"+2\r\n{}\r\n0\r\n\r\n", chunked+"2\r\n{}\r\n-0\r\n\r\n", chunked+" 2\r\n{}\r\n0\r\n\r\n",
		chunked+"00000000000000002\r\n{}\r\n0\r\n\r\n", chunked+"2\n{}\r\n0\r\n\r\n", chunked+"2\r;x\r\n{}\r\n0\r\n\r\n",
		chunked+"2\r\n{}\n0\r\n\r\n", chunked+"2\r\n{}\r\n0\r\nNoColon\r\n\r\n", chunked+"2\r\n{}\r\n0\r\nX-T: 1\n\r\n",
		chunked+"zz\r\nhello\r\n0\r\n\r\n", chunked+"5\r\nhelloXY0\r\n\r\n", chunked+"a\r\nhello",
		hdr+"Content-Length: 100\r\n\r\n{\"a\":",
	)
	return seeds
}
