package stateless

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestSeal(t *testing.T) {
	s := NewSealer()
	msg := []byte(`{"jsonrpc":"2.0","id":4,"result":{"resultType":"input_required","inputRequests":{},"requestState":"up-1"}}`)
	out := s.Seal("sess-a", msg)
	var r struct {
		Result struct {
			RequestState string `json:"requestState"`
		} `json:"result"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatal(err)
	}
	st := r.Result.RequestState
	if !strings.HasPrefix(st, upstreamPrefix) || strings.Contains(st, "up-1") {
		t.Fatalf("sealed state %q", st)
	}
	if up, wrapped, valid := s.Open("sess-a", st); up != "up-1" || !wrapped || !valid {
		t.Errorf("Open = %q %v %v", up, wrapped, valid)
	}
	if _, wrapped, valid := s.Open("sess-b", st); !wrapped || valid {
		t.Error("another session's state opened")
	}
	if _, wrapped, valid := NewSealer().Open("sess-a", st); !wrapped || valid {
		t.Error("another gateway's key opened the state")
	}
	enc, mac, _ := strings.Cut(strings.TrimPrefix(st, upstreamPrefix), ".")
	altered := upstreamPrefix + enc[:len(enc)-1] + "A." + mac
	if _, _, valid := s.Open("sess-a", altered); valid {
		t.Error("an altered state opened")
	}
	for _, bad := range []string{upstreamPrefix, upstreamPrefix + "!!.x", upstreamPrefix + "nodot"} {
		if _, wrapped, valid := s.Open("sess-a", bad); !wrapped || valid {
			t.Errorf("Open(%q) = wrapped %v valid %v", bad, wrapped, valid)
		}
	}
	if _, wrapped, _ := s.Open("sess-a", NewParkedState()); wrapped {
		t.Error("a parked call's state read as a sealed upstream state")
	}
	plain := []byte(`{"jsonrpc":"2.0","id":4,"result":{"content":[]}}`)
	if string(s.Seal("sess-a", plain)) != string(plain) {
		t.Error("a complete result was changed")
	}
}
