package connshare

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"
)

const ownUID = 1000

// fakeUID plays local users by source address: 127.0.0.1 is the gateway's own user,
// 127.0.0.N another user (uid 60000+N).
func fakeUID(remote, _ *net.TCPAddr) (int, error) {
	b := remote.IP.To4()[3]
	if b == 1 {
		return ownUID, nil
	}
	return 60000 + int(b), nil
}

type harness struct {
	t        *testing.T
	l        *Listener
	accepted chan net.Conn
}

func start(t *testing.T, max int) *harness {
	t.Helper()
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, l: Listen(raw, For(max), Options{OwnUID: ownUID, PeerUID: fakeUID}), accepted: make(chan net.Conn, 256)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := h.l.Accept()
			if err != nil {
				return
			}
			h.accepted <- c
		}
	}()
	t.Cleanup(func() {
		h.l.Close()
		<-done
		close(h.accepted)
		for c := range h.accepted {
			c.Close()
		}
	})
	return h
}

// dial connects from 127.0.0.from and reports whether the listener kept the connection
// (it came out of Accept) or refused it (a 503 to read, then EOF).
func (h *harness) dial(from byte) (net.Conn, bool) {
	h.t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, from)}, Timeout: 2 * time.Second}
	c, err := d.Dial("tcp", h.l.Addr().String())
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { c.Close() })
	// Either the server's side of c comes out of Accept, or c is answered 503.
	read := make(chan int, 1)
	go func() {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			read <- 0
			return
		}
		resp.Body.Close()
		read <- resp.StatusCode
	}()
	select {
	case sc := <-h.accepted:
		if sc.RemoteAddr().String() != c.LocalAddr().String() {
			h.t.Fatalf("accepted %s, dialled from %s", sc.RemoteAddr(), c.LocalAddr())
		}
		_ = c.SetReadDeadline(time.Now()) // end the reader
		return sc, true
	case status := <-read:
		if status != http.StatusServiceUnavailable {
			h.t.Fatalf("a connection from 127.0.0.%d was neither accepted nor answered 503 (status %d)", from, status)
		}
		return nil, false
	case <-time.After(5 * time.Second):
		h.t.Fatalf("a connection from 127.0.0.%d: no accept and no answer within 5s", from)
		return nil, false
	}
}

func TestFor(t *testing.T) {
	for _, tc := range []struct{ max, reserve, per int }{{1, 0, 1}, {2, 1, 1}, {40, 5, 9}, {4096, 512, 896}} {
		if s := For(tc.max); s.Reserve != tc.reserve || s.PerSource != tc.per {
			t.Errorf("For(%d) = %+v, want reserve %d per source %d", tc.max, s, tc.reserve, tc.per)
		}
	}
}

// TestOneSourceTakesItsShare: another local user who opens connections and sends nothing
// holds its share (9 of 40) and no more; the others are refused at once, not queued; the
// gateway's own user still connects; a connection closed gives its place back.
func TestOneSourceTakesItsShare(t *testing.T) {
	h := start(t, 40)
	var held []net.Conn
	for range 9 {
		c, ok := h.dial(2)
		if !ok {
			t.Fatalf("refused within the share (%d held)", len(held))
		}
		held = append(held, c)
	}
	for range 3 {
		if _, ok := h.dial(2); ok {
			t.Fatal("a source got past its share")
		}
	}
	if _, ok := h.dial(1); !ok {
		t.Fatal("the gateway's own user was refused")
	}
	if _, ok := h.dial(3); !ok {
		t.Fatal("another source was refused")
	}
	held[0].Close()
	if _, ok := h.dial(2); !ok {
		t.Fatal("a closed connection did not give its place back")
	}
	if h.l.Refused() != 3 {
		t.Errorf("Refused() = %d, want 3", h.l.Refused())
	}
}

// TestReserve: strangers together fill no more than Max-Reserve (35 of 40); past it a
// source is refused when it holds as many as the others, while the gateway's own user
// still gets in, up to Max.
func TestReserve(t *testing.T) {
	h := start(t, 40)
	n := 0
	for from := byte(2); n < 35; from++ {
		for range 9 {
			if n == 35 {
				break
			}
			if _, ok := h.dial(from); !ok {
				t.Fatalf("refused at %d of the 35 unadmitted places", n)
			}
			n++
		}
	}
	if _, ok := h.dial(5); ok { // 127.0.0.5 holds 8, the most anyone holds is 9
		t.Fatal("a stranger took a reserved place")
	}
	for i := range 5 {
		if _, ok := h.dial(1); !ok {
			t.Fatalf("the gateway's own user was refused at %d of the 5 reserved places", i)
		}
	}
	if _, ok := h.dial(1); ok {
		t.Fatal("past Max")
	}
}

// TestAdmit: Admit finds the connection through the request's context and moves it out
// of the unadmitted pool, once; closing it gives back its place in the right count.
func TestAdmit(t *testing.T) {
	h := start(t, 8) // reserve 1, 7 unadmitted, 2 per source
	var held []net.Conn
	for from := byte(2); len(held) < 7; from++ {
		for range 2 {
			if len(held) == 7 {
				break
			}
			c, ok := h.dial(from)
			if !ok {
				t.Fatalf("refused at %d of 7", len(held))
			}
			held = append(held, c)
		}
	}
	if _, ok := h.dial(5); ok { // 127.0.0.5 holds 1, the most anyone holds is 2
		t.Fatal("an eighth stranger took the reserve")
	}
	ctx := ConnContext(context.Background(), held[0])
	Admit(ctx)
	Admit(ctx) // twice counts once
	if _, ok := h.dial(9); !ok {
		t.Fatal("after one admission, a stranger was refused with a place free")
	}
	if _, ok := h.dial(10); ok {
		t.Fatal("past Max")
	}
	held[0].Close()
	held[0].Close()
	if _, ok := h.dial(5); ok {
		t.Fatal("the admitted connection's place went to the unadmitted pool")
	}
	held[1].Close()
	if _, ok := h.dial(10); !ok {
		t.Fatal("an unadmitted connection closed did not give its place back")
	}
}

// TestEvictForNewSource: four sources fill the unadmitted pool (35 of 40); a fifth
// source's connection takes the place of the oldest connection of a source holding the
// most, which is closed, so a caller whose credential is in headers not yet read gets
// in. A source never takes a place from one holding less than two more than it.
func TestEvictForNewSource(t *testing.T) {
	h := start(t, 40)
	var held [][]net.Conn
	n := 0
	for from := byte(2); n < 35; from++ {
		var mine []net.Conn
		for range 9 {
			if n == 35 {
				break
			}
			c, ok := h.dial(from)
			if !ok {
				t.Fatalf("refused at %d of the 35 unadmitted places", n)
			}
			mine = append(mine, c)
			n++
		}
		held = append(held, mine)
	}
	if _, ok := h.dial(20); !ok {
		t.Fatal("a new source was refused while four sources held every unadmitted place")
	}
	// The oldest connection of 127.0.0.2 (the first source holding 9) was closed.
	_ = held[0][0].SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := held[0][0].Read(make([]byte, 1)); err == nil {
		t.Error("the evicted connection is still open")
	}
	_ = held[0][1].SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if _, err := held[0][1].Read(make([]byte, 1)); !isTimeout(err) {
		t.Errorf("a second connection of the same source was closed: %v", err)
	}
	// 127.0.0.5 holds 8 and the most is 9: no eviction.
	if _, ok := h.dial(5); ok {
		t.Fatal("a source holding 8 took a place from one holding 9")
	}
	h.l.mu.Lock()
	unadmitted, total := h.l.unadmitted, h.l.total
	h.l.mu.Unlock()
	if unadmitted != 35 || total != 35 {
		t.Errorf("after an eviction: %d unadmitted, %d in all, want 35 and 35", unadmitted, total)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
