package wire

import (
	"encoding/json"
	"testing"
)

func TestObject(t *testing.T) {
	var empty Object
	if got := string(empty.Bytes()); got != "{}" {
		t.Errorf("empty object: %s", got)
	}
	var o Object
	o.Str("name", "a \"b\"\n")
	o.Raw("skipped", nil)
	o.Raw("null", []byte("null"))
	o.Raw("args", []byte(`{"x":1}`))
	o.Str("k\u2028", "v")
	got := string(o.Bytes())
	want := `{"name":"a \"b\"\n","args":{"x":1},"k\u2028":"v"}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if !json.Valid([]byte(got)) {
		t.Errorf("not valid JSON: %s", got)
	}
}
