package plugin

import (
	"bytes"
	"encoding/json"
	"errors"
)

// DecodeValue reads one JSON value by the contract's rule for values: numbers become
// int64 when integral and in range, float64 otherwise (so ids beyond 2^53 survive);
// objects become map[string]any and arrays []any. Empty input is nil. Out-of-process
// plugins (package internal/pluginproc) decode what crosses the process boundary with it, so
// a provider sees the same values in both places.
func DecodeValue(raw []byte) (any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("more than one JSON value")
	}
	if n, ok := v.(json.Number); ok {
		return number(n)
	}
	if err := numbers(v); err != nil {
		return nil, err
	}
	return v, nil
}

// DecodeObject is DecodeValue for a JSON object (empty input or null: nil).
func DecodeObject(raw []byte) (map[string]any, error) {
	v, err := DecodeValue(raw)
	if err != nil || v == nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("not a JSON object")
	}
	return m, nil
}
