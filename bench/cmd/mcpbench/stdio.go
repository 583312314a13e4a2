package main

// A newline-delimited JSON-RPC client on a child's stdin/stdout (the echo server itself, or
// mcpgw-bridge in front of the daemon).

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

type stdioPeer struct {
	name string
	p    *proc
	r    *bufio.Reader
	w    *bufio.Writer
}

func newStdioPeer(name string, p *proc) *stdioPeer {
	return &stdioPeer{name: name, p: p, r: bufio.NewReaderSize(p.stdout, 1<<20), w: bufio.NewWriterSize(p.stdin, 256<<10)}
}

type reply struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// readReply reads lines until a response (skipping notifications and requests).
func (s *stdioPeer) readReply() (reply, error) {
	for {
		line, err := s.r.ReadBytes('\n')
		if err != nil {
			return reply{}, fmt.Errorf("%s: read: %w", s.name, err)
		}
		var m reply
		if err := json.Unmarshal(line, &m); err != nil {
			return reply{}, fmt.Errorf("%s: bad line %.200q: %w", s.name, line, err)
		}
		if m.Method != "" {
			continue
		}
		return m, nil
	}
}

func (s *stdioPeer) send(line []byte) error {
	if _, err := s.w.Write(line); err != nil {
		return err
	}
	if err := s.w.WriteByte('\n'); err != nil {
		return err
	}
	return s.w.Flush()
}

// init runs the handshake, bounded by timeout.
func (s *stdioPeer) init(timeout time.Duration) error {
	return withTimeout(timeout, s.name+" initialize", func() error {
		if err := s.send([]byte(initBody)); err != nil {
			return err
		}
		m, err := s.readReply()
		if err != nil {
			return err
		}
		if m.Result == nil {
			return fmt.Errorf("%s: initialize failed: %s", s.name, m.Error)
		}
		return s.send([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	})
}

func withTimeout(d time.Duration, what string, f func() error) error {
	errc := make(chan error, 1)
	go func() { errc <- f() }()
	select {
	case err := <-errc:
		return err
	case <-time.After(d):
		return fmt.Errorf("%s: %w after %s", what, errTimeout, d)
	}
}

func checkReply(m reply, id int64) error {
	if string(m.ID) != strconv.FormatInt(id, 10) {
		return fmt.Errorf("answer to id %s, expected %d", m.ID, id)
	}
	if m.Result == nil || bytes.Contains(m.Result, errorMark) {
		return fmt.Errorf("error answer: %.200s%.200s", m.Error, m.Result)
	}
	return nil
}

// sequential sends tools/call requests one at a time for dur (or maxN).
func (s *stdioPeer) sequential(o op, dur time.Duration, maxN int) stats {
	var st stats
	st.Lat = make([]time.Duration, 0, 4096)
	body := make([]byte, 0, 256)
	start := time.Now()
	deadline := start.Add(dur)
	for n := 0; n < maxN; n++ {
		t0 := time.Now()
		if !t0.Before(deadline) {
			break
		}
		id := idSeq.Add(1)
		body = o(body, id)
		err := s.send(body)
		var m reply
		if err == nil {
			m, err = s.readReply()
		}
		if err == nil {
			err = checkReply(m, id)
		}
		d := time.Since(t0)
		st.N++
		if err != nil {
			st.Errors++
			if st.FirstErr == "" {
				st.FirstErr = err.Error()
			}
			if m.ID == nil {
				break // the stream is broken
			}
			continue
		}
		st.Lat = append(st.Lat, d)
	}
	st.Elapsed = time.Since(start)
	return st
}

// burst writes n requests without waiting, then reads n answers (bounded by timeout).
func (s *stdioPeer) burst(o op, n int, timeout time.Duration) stats {
	var st stats
	ids := make(map[string]bool, n)
	first := idSeq.Add(int64(n)) - int64(n) + 1
	start := time.Now()
	werr := make(chan error, 1)
	go func() {
		body := make([]byte, 0, 256)
		for i := 0; i < n; i++ {
			body = o(body, first+int64(i))
			if _, err := s.w.Write(append(body, '\n')); err != nil {
				werr <- err
				return
			}
		}
		werr <- s.w.Flush()
	}()
	for i := 0; i < n; i++ {
		ids[strconv.FormatInt(first+int64(i), 10)] = true
	}
	err := withTimeout(timeout, s.name+" burst", func() error {
		for got := 0; got < n; got++ {
			m, err := s.readReply()
			if err != nil {
				return err
			}
			st.N++
			if !ids[string(m.ID)] || m.Result == nil || bytes.Contains(m.Result, errorMark) {
				st.Errors++
				if st.FirstErr == "" {
					st.FirstErr = fmt.Sprintf("id %s: %.200s%.200s", m.ID, m.Error, m.Result)
				}
			}
			delete(ids, string(m.ID))
		}
		return nil
	})
	st.Elapsed = time.Since(start)
	if err == nil {
		err = <-werr
	}
	if err != nil {
		st.Errors += n - st.N
		if st.FirstErr == "" {
			st.FirstErr = err.Error()
		}
	}
	return st
}
