// Package sockconn is the Unix socket's connection plumbing: the peer's user check, the
// first byte of a connection read to choose between HTTP and the bridge's line mode, and
// the listener that hands the HTTP connections to an http.Server.
package sockconn

import (
	"bufio"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/peercred"
)

// CheckPeer says whether the process at the other end of a socket connection runs as the
// gateway's own user: nil if so, else why not (peercred.Check is per OS: SO_PEERCRED on
// Linux, LOCAL_PEERCRED on macOS, the peer process's token user on Windows).
func CheckPeer(c net.Conn) error {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return errors.New("not a unix socket connection")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return err
	}
	var cerr error
	if err := raw.Control(func(fd uintptr) { cerr = peercred.Check(fd) }); err != nil {
		return err
	}
	return cerr
}

// Peeked is a socket connection whose first bytes were read into its reader, with
// CheckPeer's verdict on its peer.
type Peeked struct {
	net.Conn
	R       *bufio.Reader
	PeerErr error
}

func (p *Peeked) Read(b []byte) (int, error) { return p.R.Read(b) }

// sniffWait bounds the wait for a connection's first byte.
const sniffWait = 10 * time.Second

// Sniff checks c's peer and reads its first byte (10 s at most): '{' starts the line mode,
// anything else is HTTP. An error means the connection sent nothing and is closed.
func Sniff(c net.Conn) (*Peeked, byte, error) {
	p := &Peeked{Conn: c, R: bufio.NewReaderSize(c, 64<<10), PeerErr: CheckPeer(c)}
	_ = c.SetReadDeadline(time.Now().Add(sniffWait))
	first, err := p.R.Peek(1)
	_ = c.SetReadDeadline(time.Time{})
	if err != nil {
		c.Close()
		return nil, 0, err
	}
	return p, first[0], nil
}

// Listener hands sniffed connections to an http.Server.
type Listener struct {
	ch   chan net.Conn
	done chan struct{}
	once sync.Once
	addr net.Addr
}

// NewListener is a Listener whose Addr is addr.
func NewListener(addr net.Addr) *Listener {
	return &Listener{ch: make(chan net.Conn), done: make(chan struct{}), addr: addr}
}

// Offer hands c to the server's Accept; false once the listener is closed.
func (l *Listener) Offer(c net.Conn) bool {
	select {
	case l.ch <- c:
		return true
	case <-l.done:
		return false
	}
}

func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *Listener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *Listener) Addr() net.Addr { return l.addr }
