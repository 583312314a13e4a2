package oauth

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestParseObject(t *testing.T) {
	good := []string{
		`{}`,
		` {"issuer": "https://h", "n": 1.5, "a": ["x"], "o": {"issuer": "nested dup is fine"}} `,
		"{\"a\":null}\n",
	}
	for _, s := range good {
		if _, err := parseObject([]byte(s)); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	bad := map[string]string{
		"duplicate":        `{"issuer":"https://a","issuer":"https://b"}`,
		"not an object":    `["issuer"]`,
		"string":           `"x"`,
		"truncated":        `{"issuer":"https://a"`,
		"trailing garbage": `{"issuer":"https://a"} x`,
		"two objects":      `{}{}`,
		"trailing bracket": `{} ]`,
		"empty":            ``,
		"html":             `<html>Not Found</html>`,
	}
	for name, s := range bad {
		if _, err := parseObject([]byte(s)); err == nil {
			t.Errorf("%s: %s accepted", name, s)
		}
	}
}

func TestObjectMembersMatchExactly(t *testing.T) {
	// encoding/json would fill an Issuer field from "ISSUER"; a reader of this package must
	// not see an issuer here at all.
	obj, err := parseObject([]byte(`{"ISSUER":"https://evil","Token_Endpoint":"https://evil/t"}`))
	if err != nil {
		t.Fatal(err)
	}
	r := reader{obj: obj}
	if got := r.str("issuer"); got != "" || r.err != nil {
		t.Errorf("issuer %q, err %v", got, r.err)
	}
}

func TestObjectTypedReads(t *testing.T) {
	obj, err := parseObject([]byte(`{"s":"v","n":3,"b":true,"a":["x","y"],"z":null,"bad":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	r := reader{obj: obj}
	if r.str("s") != "v" || !r.boolean("b") || len(r.strs("a")) != 2 || r.str("z") != "" || r.err != nil {
		t.Fatalf("reads wrong: err %v", r.err)
	}
	if n, ok, err := obj.number("n"); n != 3 || !ok || err != nil {
		t.Errorf("number %v %v %v", n, ok, err)
	}
	for _, read := range []func(){
		func() { r.str("bad") }, func() { r.strs("s") }, func() { r.boolean("s") },
	} {
		r.err = nil
		read()
		if r.err == nil {
			t.Error("a member of the wrong type was accepted")
		}
	}
	if _, _, err := obj.number("s"); err == nil {
		t.Error("a string read as a number")
	}
}

// FuzzParseObjectAgreesWithEncodingJSON holds the strict reader against encoding/json:
// whatever it accepts, encoding/json reads the same members from; whatever encoding/json
// accepts, it accepts too unless a member name repeats.
func FuzzParseObjectAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1,"b":[1,2],"c":{"d":null}}`, `{"a":1,"a":2}`, `{"a":"\u00e9"}`, `[1]`, `{"a":1} `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		mine, myErr := parseObject(in)
		var theirs map[string]json.RawMessage
		theirErr := json.Unmarshal(in, &theirs)
		if myErr == nil {
			if theirErr != nil || theirs == nil {
				t.Fatalf("accepted %q that encoding/json refuses: %v", in, theirErr)
			}
			if len(mine) != len(theirs) {
				t.Fatalf("%q: %d members, encoding/json %d", in, len(mine), len(theirs))
			}
			for k, v := range theirs {
				if !bytes.Equal(mine[k], v) {
					t.Fatalf("%q: member %q is %s, encoding/json %s", in, k, mine[k], v)
				}
			}
			return
		}
		if theirErr == nil && theirs != nil && !strings.Contains(myErr.Error(), "duplicate") {
			t.Fatalf("refused %q that encoding/json reads: %v", in, myErr)
		}
	})
}
