package bridge

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mcpgw/mcpgw/internal/runnerlink"
)

// RunnerOptions configure a runner: the bridge binary's mode that runs, in an executor's
// own environment, the stdio servers the gateway asks for there (docs/runners.md).
type RunnerOptions struct {
	// Gateway is the gateway's base URL: http(s)://host:port, or unix:/path/to/socket for
	// a socket that reaches the gateway's HTTP listener.
	Gateway string
	// Executor is the executor the runner serves; Token one of its runner keys.
	Executor, Token string
	// Version is sent as the User-Agent.
	Version string
	// MaxBackoff bounds the wait between two connection attempts (default 30 s); the
	// first wait is a second, doubled after each failure.
	MaxBackoff time.Duration
	// Attempts bounds the connection attempts in a row that fail before Run gives up (0:
	// no bound): with a bound, a runner whose gateway never comes back ends.
	Attempts int
	// MaxMessage bounds one message (0: runnerlink.DefaultMaxMessage).
	MaxMessage int
	Log        *slog.Logger
}

// RunRunner connects to the gateway and serves it until ctx ends: on a lost connection it
// stops the servers it ran and connects again, waiting a second, then twice as long after
// each failure up to MaxBackoff. A gateway that refuses the credential ends it with an
// error wrapping runnerlink.ErrRefused (no retry: a revoked key stays revoked).
func RunRunner(ctx context.Context, o RunnerOptions) error {
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 30 * time.Second
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	wait, failures := time.Second, 0
	for {
		start := time.Now()
		conn, err := dialRunner(ctx, o)
		if errors.Is(err, runnerlink.ErrRefused) {
			return err
		}
		if err == nil {
			o.Log.Info("runner connected", "gateway", o.Gateway, "executor", o.Executor)
			failures = 0
			err = runnerlink.Serve(conn, newRunnerStarter(o.Log, o.MaxMessage), o.MaxMessage)
			if time.Since(start) > time.Minute {
				wait = time.Second // it worked for a while: the next try comes soon
			}
		} else {
			failures++
		}
		if ctx.Err() != nil {
			return nil
		}
		if o.Attempts > 0 && failures >= o.Attempts {
			return fmt.Errorf("gateway unreachable after %d attempts: %w", failures, err)
		}
		o.Log.Warn("runner disconnected; reconnecting", "err", err, "in", wait)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		wait = min(wait*2, o.MaxBackoff)
	}
}

// dialRunner opens the runner link: GET /runner upgraded to runnerlink.Protocol.
func dialRunner(ctx context.Context, o RunnerOptions) (net.Conn, error) {
	network, addr, host, useTLS, err := runnerTarget(o.Gateway)
	if err != nil {
		return nil, err
	}
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(dctx, network, addr)
	if err != nil {
		return nil, err
	}
	if useTLS {
		tc := tls.Client(conn, &tls.Config{ServerName: strings.Split(host, ":")[0], MinVersion: tls.VersionTLS12})
		if err := tc.HandshakeContext(dctx); err != nil {
			conn.Close()
			return nil, err
		}
		conn = tc
	}
	req, _ := http.NewRequest(http.MethodGet, "http://"+host+runnerPath, nil)
	req.Header.Set("Upgrade", runnerlink.Protocol)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Authorization", "Bearer "+o.Token)
	req.Header.Set("Mcpgw-Executor", o.Executor)
	req.Header.Set("User-Agent", "mcpgw-runner/"+o.Version)
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if err := req.Write(conn); err != nil {
		conn.Close()
		return nil, err
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		conn.Close()
		return nil, err
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		conn.Close()
		err := fmt.Errorf("gateway answered %s: %s", resp.Status, strings.TrimSpace(string(body)))
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			err = fmt.Errorf("%w: %v", runnerlink.ErrRefused, err)
		}
		return nil, err
	}
	_ = conn.SetDeadline(time.Time{})
	if br.Buffered() > 0 {
		// The gateway may open a stream at once (a session waits for this runner): its
		// first frames can come in the same read as the 101. They are the link's.
		return upgradedConn{Conn: conn, r: br}, nil
	}
	return conn, nil
}

// upgradedConn is the runner link's connection whose first bytes were read with the
// upgrade's answer: reads take them first, then the connection's own.
type upgradedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c upgradedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// runnerPath is where the gateway admits runners.
const runnerPath = "/runner"

// runnerTarget reads a runner's --gateway: the network and address to dial, the Host of
// the request, and whether it is TLS.
func runnerTarget(gw string) (network, addr, host string, useTLS bool, err error) {
	if p, ok := strings.CutPrefix(gw, "unix:"); ok {
		p = strings.TrimPrefix(p, "//")
		if p == "" {
			return "", "", "", false, errors.New("--gateway unix: needs a socket path")
		}
		return "unix", p, "localhost", false, nil
	}
	u, err := url.Parse(gw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", "", "", false, fmt.Errorf("--gateway %q: want http://host:port, https://host:port or unix:/path", gw)
	}
	addr = u.Host
	if u.Port() == "" {
		if u.Scheme == "https" {
			addr += ":443"
		} else {
			addr += ":80"
		}
	}
	return "tcp", addr, u.Host, u.Scheme == "https", nil
}
