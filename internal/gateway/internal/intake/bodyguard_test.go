package intake

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"
)

// guarded serves h behind GuardBody with rules, as the gateway's handler does.
func guarded(t *testing.T, rules BodyRules, h http.HandlerFunc) string {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer GuardBody(w, r, rules).Release()
		h(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.Listener.Addr().String()
}

// stalledPost sends a POST to addr that declares length bytes and sends one, then reads
// the answer within wait (on the raw connection: a client library would wait to send
// the body first).
func stalledPost(t *testing.T, addr string, length int, wait time.Duration) (*http.Response, time.Duration) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	start := time.Now()
	_, _ = io.WriteString(c, "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "+
		strconv.Itoa(length)+"\r\n\r\n{")
	_ = c.SetReadDeadline(time.Now().Add(wait))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer within %s: %v", wait, err)
	}
	resp.Body.Close()
	return resp, time.Since(start)
}

// TestGuardRefusalWithoutBody: an answer decided on the headers (a 401) reaches a client
// whose declared body never arrives, at once, and closes the connection. Without the
// guard net/http reads the body's rest before it answers, and never answers.
func TestGuardRefusalWithoutBody(t *testing.T) {
	addr := guarded(t, BodyRules{Timeout: time.Minute, MinRate: 1024, Grace: time.Minute}, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no credential", http.StatusUnauthorized)
	})
	resp, took := stalledPost(t, addr, 100000, 5*time.Second)
	if resp.StatusCode != http.StatusUnauthorized || !resp.Close {
		t.Errorf("status %d close %v, want 401 and Connection: close", resp.StatusCode, resp.Close)
	}
	if took > 2*time.Second {
		t.Errorf("the 401 took %s", took)
	}
}

// TestGuardBodyTimeout: a body that stalls is answered 408 at http.body_timeout, and at
// the rate's grace when body_min_rate applies.
func TestGuardBodyTimeout(t *testing.T) {
	read := func(w http.ResponseWriter, r *http.Request) {
		if _, ok := ReadBody(w, r, 1<<20); ok {
			w.WriteHeader(http.StatusOK)
		}
	}
	for _, tc := range []struct {
		name  string
		rules BodyRules
	}{
		{"body_timeout", BodyRules{Timeout: 300 * time.Millisecond}},
		{"body_min_rate", BodyRules{Timeout: time.Minute, MinRate: 1024, Grace: 300 * time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := guarded(t, tc.rules, read)
			resp, took := stalledPost(t, addr, 100, 10*time.Second)
			if resp.StatusCode != http.StatusRequestTimeout {
				t.Errorf("status %d, want 408", resp.StatusCode)
			}
			if took > 5*time.Second {
				t.Errorf("the 408 took %s", took)
			}
		})
	}
}

// TestGuardKeepsAlive: a body read to its end (exactly Content-Length, no EOF seen) leaves
// the connection open for the next request, and its deadline does not cut a long answer.
func TestGuardKeepsAlive(t *testing.T) {
	addr := guarded(t, BodyRules{Timeout: 200 * time.Millisecond, MinRate: 1024, Grace: 100 * time.Millisecond}, func(w http.ResponseWriter, r *http.Request) {
		b, ok := ReadBody(w, r, 1<<20)
		if !ok {
			return
		}
		if string(b) == "slow" {
			// A long call after its body: past every deadline of the body.
			time.Sleep(400 * time.Millisecond)
		}
		_, _ = w.Write(b)
	})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	for i, body := range []string{"slow", "again"} {
		_, _ = io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request %d on one connection: %v", i, err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(got) != body || resp.Close {
			t.Errorf("request %d: %d %q close=%v", i, resp.StatusCode, got, resp.Close)
		}
	}
}
