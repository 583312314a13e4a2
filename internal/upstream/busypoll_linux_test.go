package upstream

import (
	"fmt"
	"io"
	"net"
	"os"
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
