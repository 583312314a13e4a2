package wire

import (
	"encoding/json"
	"testing"
)

func TestDefinedCode(t *testing.T) {
	for _, c := range []struct {
		name, in, wantMsg string
		wantCode          int
		same              bool
	}{
		{name: "defined code kept", in: `{"code":-32602,"message":"bad"}`, same: true},
		{name: "application code kept", in: `{"code":42,"message":"app"}`, same: true},
		{name: "odd message, code kept", in: `{"code":-32000,"message":7}`, same: true},
		{name: "zero", in: `{"code":0,"message":"client does not support elicitation","data":{"x":1}}`, wantCode: CodeInternalError, wantMsg: `upstream "u": client does not support elicitation`},
		{name: "missing", in: `{"message":"m"}`, wantCode: CodeInternalError, wantMsg: `upstream "u": m`},
		{name: "not an integer", in: `{"code":"x","message":"m"}`, wantCode: CodeInternalError, wantMsg: `upstream "u": m`},
		{name: "fraction", in: `{"code":1.5,"message":"m"}`, wantCode: CodeInternalError, wantMsg: `upstream "u": m`},
		{name: "not an object", in: `"boom"`, wantCode: CodeInternalError, wantMsg: `upstream "u" answered an error without a code or message`},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := DefinedCode(json.RawMessage(c.in), `upstream "u"`)
			if c.same {
				if string(out) != c.in {
					t.Fatalf("got %s, want it unchanged", out)
				}
				return
			}
			e := ParseError(out)
			if e.Code != c.wantCode || e.Message != c.wantMsg {
				t.Fatalf("got %s, want code %d message %q", out, c.wantCode, c.wantMsg)
			}
			if c.name == "zero" && string(e.Data) != `{"x":1}` {
				t.Errorf("data %s, want the upstream's", e.Data)
			}
		})
	}
}
