package upstream

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// listenChildEnv makes the test binary a TCP listener in a process of its own: it prints
// its address, accepts connections and holds them until its stdin closes.
const listenChildEnv = "MCPGW_TEST_LISTEN_CHILD"

func listenChild() {
	ln, err := net.Listen("tcp", os.Getenv(listenChildEnv))
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr())
	go holdConns(ln, nil)
	_, _ = io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// holdConns accepts connections on ln and keeps them open until ln is closed, telling
// accepted (when not nil) of each one.
func holdConns(ln net.Listener, accepted chan<- struct{}) {
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		held = append(held, c)
		if accepted != nil {
			accepted <- struct{}{}
		}
	}
}

// TestServedHere: a connection to a listener of this process is served here; one to a
// listener of another process is not: on IPv4 and IPv6 loopback, and over IPv4 to a
// dual-stack listener (":0", whose IPv4 connections are IPv6 sockets).
func TestServedHere(t *testing.T) {
	for _, host := range []string{"127.0.0.1", "[::1]", ""} {
		t.Run("listen "+host, func(t *testing.T) {
			ln, err := net.Listen("tcp", host+":0")
			if err != nil {
				t.Skipf("no %s loopback here: %v", host, err)
			}
			defer ln.Close()
			accepted := make(chan struct{}, 1)
			go holdConns(ln, accepted)
			dial := func(addr string) string { // the dual-stack listener is dialled over IPv4
				if host == "" {
					_, port, _ := net.SplitHostPort(addr)
					return "127.0.0.1:" + port
				}
				return addr
			}
			c, err := net.DialTimeout("tcp", dial(ln.Addr().String()), 2*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			// The peer socket is this process's once the listener has accepted it; on a
			// loaded machine that comes after Dial returns.
			select {
			case <-accepted:
			case <-time.After(10 * time.Second):
				t.Fatal("the listener did not accept within 10 s")
			}
			if !servedHere(c) {
				t.Errorf("a connection to this process's own listener %s is not served here", ln.Addr())
			}

			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), listenChildEnv+"="+host+":0")
			stdin, _ := cmd.StdinPipe()
			stdout, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { stdin.Close(); _ = cmd.Process.Kill(); _ = cmd.Wait() }()
			line, err := bufio.NewReader(stdout).ReadString('\n')
			if err != nil || strings.HasPrefix(line, "error") {
				t.Fatalf("child listener: %q %v", line, err)
			}
			oc, err := net.DialTimeout("tcp", dial(strings.TrimSpace(line)), 2*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer oc.Close()
			if servedHere(oc) {
				t.Errorf("a connection to another process's listener %s counts as served here", strings.TrimSpace(line))
			}
		})
	}
}
