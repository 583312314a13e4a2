package reqparams

import (
	"errors"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	p, err := Read([]byte(`{"name":"t","arguments":{"a":1},"_meta":{"progressToken":3},"cursor":"c","other":true}`))
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "t" || string(p.Arguments) != `{"a":1}` || string(p.Meta) != `{"progressToken":3}` || p.Cursor != "c" {
		t.Fatalf("read %+v", p)
	}
	for _, empty := range []string{"", "null"} {
		if p, err := Read([]byte(empty)); err != nil || p.Name != "" {
			t.Errorf("Read(%q) = %+v, %v; want empty", empty, p, err)
		}
	}
}

// TestReadStrict: what the gateway routes on is read one way only: a member named twice,
// a routed member that is no string, and params that are no object are errors; a name
// spelled in another case is not the member.
func TestReadStrict(t *testing.T) {
	for _, bad := range []string{
		`{"name":"a","name":"b"}`,
		`{"name":1}`,
		`{"uri":["x"]}`,
	} {
		if _, err := Read([]byte(bad)); err == nil {
			t.Errorf("Read(%s): no error", bad)
		}
	}
	if _, err := Read([]byte(`[1]`)); !errors.Is(err, ErrNotObject) {
		t.Errorf("Read([1]) = %v, want ErrNotObject", err)
	}
	p, err := Read([]byte(`{"Name":"upper","name":"lower"}`))
	if err != nil || p.Name != "lower" {
		t.Errorf("Read with Name and name = %+v, %v; want name lower", p, err)
	}
	if _, err := Read([]byte(`{"name":"a` + "\xff" + `"}`)); err == nil || !strings.HasPrefix(err.Error(), "name ") {
		t.Errorf("invalid UTF-8 in name: %v, want an error naming the member", err)
	}
}

func TestReadRef(t *testing.T) {
	r, err := ReadRef([]byte(`{"type":"ref/prompt","name":"p"}`))
	if err != nil || r.Type != "ref/prompt" || r.Name != "p" {
		t.Fatalf("ReadRef = %+v, %v", r, err)
	}
	if _, err := ReadRef([]byte(`{"type":"a","type":"b"}`)); err == nil {
		t.Error("a ref with type twice read without error")
	}
}

func TestLevels(t *testing.T) {
	if !ValidLevel("warning") || ValidLevel("Warning") || ValidLevel("") {
		t.Error("ValidLevel disagrees with the protocol's levels")
	}
	cases := []struct {
		session, msg string
		want         bool
	}{
		{"", `{"level":"debug"}`, true},
		{"warning", `{"level":"debug"}`, false},
		{"warning", `{"level":"warning"}`, true},
		{"warning", `{"level":"emergency"}`, true},
		{"warning", `{"level":"odd"}`, true},
	}
	for _, c := range cases {
		if got := LevelAllowed(c.session, []byte(c.msg)); got != c.want {
			t.Errorf("LevelAllowed(%q, %s) = %v, want %v", c.session, c.msg, got, c.want)
		}
	}
}
