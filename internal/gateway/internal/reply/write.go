package reply

import (
	"net/http"

	"github.com/mcpgw/mcpgw/internal/wire"
)

// JSON answers with one JSON body and status.
func JSON(w http.ResponseWriter, status int, body []byte) {
	w.Header()["Content-Type"] = ctJSON
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// Error answers with status and a JSON-RPC error that has no id: the answer of a request
// refused before its message was read.
func Error(w http.ResponseWriter, status, code int, msg string) {
	JSON(w, status, wire.Error(nil, code, msg, nil))
}
