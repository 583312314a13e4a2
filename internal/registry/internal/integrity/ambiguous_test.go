package integrity

import (
	"encoding/json"
	"testing"
)

func TestAmbiguous(t *testing.T) {
	for _, c := range []struct {
		def  string
		want bool
	}{
		{`{"name":"a","description":"x"}`, false},
		{`{"name":"a","description":"harmless","description":"evil"}`, true},
		{`{"name":"a","inputSchema":{"properties":{"q":{"description":"x","description":"y"}}}}`, true},
		{`{"name":"a","inputSchema":{"properties":{"q":{"type":"string"},"r":{"type":"string"}}}}`, false},
		{`{"a":[{"k":1},{"k":2}],"b":{"k":1}}`, false}, // the same name in sibling objects
		{`{"a":[{"k":1,"k":2}]}`, true},
		{`{"a":{"b":{}},"c":1}`, false},
		{`{"name":"a"`, true}, // unfinished
		{`not json`, true},
	} {
		if got := Ambiguous(json.RawMessage(c.def)); got != c.want {
			t.Errorf("Ambiguous(%s) = %v, want %v", c.def, got, c.want)
		}
	}
}
