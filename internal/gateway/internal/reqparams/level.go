package reqparams

import "encoding/json"

// levelRank orders the log levels, least severe first.
var levelRank = map[string]int{"debug": 0, "info": 1, "notice": 2, "warning": 3, "error": 4, "critical": 5, "alert": 6, "emergency": 7}

// ValidLevel reports whether level is one of the protocol's log levels.
func ValidLevel(level string) bool {
	_, ok := levelRank[level]
	return ok
}

// LevelAllowed reports whether a log notification with params passes a session's level
// (no level: everything; a notification with an unknown level passes too).
func LevelAllowed(sessionLevel string, params json.RawMessage) bool {
	if sessionLevel == "" {
		return true
	}
	var p struct {
		Level string `json:"level"`
	}
	_ = json.Unmarshal(params, &p)
	r, ok := levelRank[p.Level]
	return !ok || r >= levelRank[sessionLevel]
}
