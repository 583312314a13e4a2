package gateway_test

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

// dialRunner asks the gateway at addr for executor's runner link with key, as
// mcpgw-bridge runner does; it returns the answer's status and Retry-After. A link it
// opens is closed at once.
func dialRunner(t *testing.T, addr, executor, key string) (int, string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/runner", nil)
	req.Header.Set("Upgrade", "mcpgw-runner/1")
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Mcpgw-Executor", executor)
	req.Header.Set("Authorization", "Bearer "+key)
	if err := req.Write(c); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Retry-After")
}

// TestRunnerKeyGuessingSlowed: a burst of wrong runner keys from one source meets the
// gateway's sign-in back-off (a few are checked, the rest answered 429 with Retry-After),
// which slows that source's admin credentials too (one guard for every guessable
// credential); the right runner key is not checked while the source waits, and connects
// once the wait is over.
func TestRunnerKeyGuessingSlowed(t *testing.T) {
	sum := sha256.Sum256([]byte("the-right-runner-key"))
	g := gatewaytest.Start(t, `
listen: {{listen}}
state_dir: {{state_dir}}
executors:
  box: {type: local_docker, runner: {keys: ["`+hex.EncodeToString(sum[:])+`"]}}
`)
	status := map[int]int{}
	for i := 0; i < 30; i++ {
		st, retry := dialRunner(t, g.Addr, "box", "guess-"+string(rune('a'+i%26)))
		status[st]++
		if st == http.StatusTooManyRequests && retry == "" {
			t.Fatalf("try %d: 429 without Retry-After", i+1)
		}
	}
	if status[http.StatusUnauthorized] > 6 || status[http.StatusTooManyRequests] < 24 {
		t.Fatalf("30 wrong runner keys at once: %v, want at most 6 checked (401) and the rest 429", status)
	}
	if st, _ := dialRunner(t, g.Addr, "box", "the-right-runner-key"); st != http.StatusTooManyRequests {
		t.Fatalf("the right runner key while its source is slowed: HTTP %d, want 429", st)
	}
	if a := g.API(t, "GET", "/api/servers", "", g.LocalAuth(t)); a.Status != http.StatusTooManyRequests {
		t.Fatalf("the admin API from the slowed source: %s, want 429", a)
	}
	// The wait is one second after the sixth failure (signin's defaults): the right key
	// connects once it has passed, and is not counted as a guess meanwhile.
	deadline := time.Now().Add(15 * time.Second)
	for i := 0; ; i++ {
		st, _ := dialRunner(t, g.Addr, "box", "the-right-runner-key")
		if st == http.StatusSwitchingProtocols {
			break
		}
		if st != http.StatusTooManyRequests || i >= 100 || time.Now().After(deadline) {
			t.Fatalf("the right runner key after the wait (try %d): HTTP %d, want 101", i+1, st)
		}
		time.Sleep(100 * time.Millisecond) // the back-off's own clock: nothing to wait on
	}
	if a := g.API(t, "GET", "/api/servers", "", g.LocalAuth(t)); a.Status != http.StatusOK {
		t.Errorf("the admin API after the right runner key cleared the source: %s, want 200", a)
	}
}
