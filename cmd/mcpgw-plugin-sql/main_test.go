package main

import (
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"
)

// The config the gateway sends is checked before anything opens: none, unknown keys and
// config problems are errors that name the problem.
func TestOpenConfig(t *testing.T) {
	for name, c := range map[string]struct{ raw, want string }{
		"none":        {"", "needs a config"},
		"not json":    {"{", "config:"},
		"unknown key": {`{"conections":{}}`, `unknown field "conections"`},
		"no conns":    {`{"connections":{}}`, "at least one is needed"},
		"bad driver":  {`{"connections":{"a":{"driver":"oracle","dsn":"x"}}}`, `"oracle" is not supported`},
	} {
		_, err := open(context.Background(), json.RawMessage(c.raw))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, c.want)
		}
	}
	dsn := filepath.Join(t.TempDir(), "x.db")
	p, err := open(context.Background(), json.RawMessage(`{"connections":{"a":{"driver":"sqlite","dsn":`+string(must(json.Marshal(dsn)))+`}}}`))
	if err != nil {
		t.Fatal(err)
	}
	defer p.(io.Closer).Close()
	cs, err := p.Connections(context.Background())
	if err != nil || len(cs) != 1 || cs[0].ID != "a" {
		t.Errorf("connections: %v %v", cs, err)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
