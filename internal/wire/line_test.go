package wire

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestReadLine(t *testing.T) {
	long := strings.Repeat("x", 100)
	in := "  {\"a\":1}  \n\n" + long + "\n{\"b\":2}\n{\"c\":3}"
	r := bufio.NewReaderSize(strings.NewReader(in), 16) // lines longer than the buffer
	var got []string
	var tooLarge int
	for i := 0; i < 10; i++ {
		line, err := ReadLine(r, 50)
		if errors.Is(err, ErrLineTooLarge) {
			tooLarge++
			continue
		}
		if len(line) > 0 {
			got = append(got, string(line))
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("ReadLine: %v", err)
		}
	}
	want := []string{`{"a":1}`, `{"b":2}`, `{"c":3}`}
	if strings.Join(got, "|") != strings.Join(want, "|") || tooLarge != 1 {
		t.Fatalf("got %q and %d too large; want %q and 1", got, tooLarge, want)
	}
	// Each line is its own copy.
	r = bufio.NewReader(strings.NewReader("first\nsecond\n"))
	a, _ := ReadLine(r, 50)
	b, _ := ReadLine(r, 50)
	if string(a) != "first" || string(b) != "second" {
		t.Fatalf("lines overwritten: %q %q", a, b)
	}
}
