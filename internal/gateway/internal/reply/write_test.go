package reply

import (
	"net/http/httptest"
	"testing"
)

func TestJSONAndError(t *testing.T) {
	w := httptest.NewRecorder()
	Error(w, 413, -32600, "too large")
	if w.Code != 413 || w.Header().Get("Content-Type") != "application/json" ||
		w.Body.String() != `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"too large"}}` {
		t.Errorf("Error wrote %d %q %s", w.Code, w.Header().Get("Content-Type"), w.Body.String())
	}
}
