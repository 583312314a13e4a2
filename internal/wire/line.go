package wire

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
)

// ErrLineTooLarge is returned by ReadLine for a line over its bound; the rest of that line
// has been skipped, so the next call reads the line after it.
var ErrLineTooLarge = errors.New("line too large")

// ReadLine reads one newline-delimited message (stdio, the bridge's line mode) of at most
// max bytes: a fresh copy (it may outlive the next call), without surrounding white space.
// At the end of the input it returns the last, unterminated line with the reader's error.
func ReadLine(r *bufio.Reader, max int) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(buf)+len(chunk) > max {
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = r.ReadSlice('\n')
			}
			if err != nil {
				return nil, err
			}
			return nil, fmt.Errorf("%w: message over %d bytes", ErrLineTooLarge, max)
		}
		buf = append(buf, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSpace(buf), err
	}
}
