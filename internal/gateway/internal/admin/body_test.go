package admin

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
)

type doc struct {
	Name string            `json:"name"`
	Args []string          `json:"args"`
	Meta map[string]string `json:"meta"`
}

func TestDecodeStrict(t *testing.T) {
	cases := []struct {
		body, field, msg string
	}{
		{`{"name":"a","colour":1}`, "colour", `unknown field "colour"`},
		{`{"name":3}`, "name", "must be a string, not a JSON number"},
		{`{"args":"x"}`, "args", "must be an array"},
		{`[1]`, "", "the body must be a JSON object"},
		{`{"name":"a"} {}`, "", "more than one value"},
		{"{\n\"name\":", "", "the JSON ends too early"},
		{`{"title":"a","name":"b"}`, "title", "the same field"},
	}
	for _, c := range cases {
		var d doc
		errs := DecodeStrict([]byte(c.body), &d, map[string]string{"title": "name"})
		if len(errs) != 1 || errs[0].Field != c.field || !strings.Contains(errs[0].Message, c.msg) {
			t.Errorf("%s: got %+v, want one error on %q containing %q", c.body, errs, c.field, c.msg)
		}
	}
	var d doc
	if errs := DecodeStrict([]byte(`{"title":"a","args":["x"],"meta":{"k":"v"}}`), &d, map[string]string{"title": "name"}); errs != nil {
		t.Fatalf("a good body: %+v", errs)
	}
	if want := (doc{Name: "a", Args: []string{"x"}, Meta: map[string]string{"k": "v"}}); !reflect.DeepEqual(d, want) {
		t.Errorf("decoded %+v, want %+v", d, want)
	}
}

func TestMergePatch(t *testing.T) {
	var target, patch map[string]any
	_ = json.Unmarshal([]byte(`{"a":1,"b":{"c":2,"d":3},"e":4}`), &target)
	_ = json.Unmarshal([]byte(`{"a":null,"b":{"c":5},"f":6}`), &patch)
	got, _ := json.Marshal(MergePatch(target, patch))
	if want := `{"b":{"c":5,"d":3},"e":4,"f":6}`; string(got) != want {
		t.Errorf("merged %s, want %s", got, want)
	}
}

func TestPreconditionFailed(t *testing.T) {
	etag := ETag("abc")
	for _, c := range []struct {
		ifMatch string
		failed  bool
	}{{"", false}, {"*", false}, {`"abc"`, false}, {`"x", W/"abc"`, false}, {`"old"`, true}} {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodPut, "/api/x", nil)
		r.Header.Set("If-Match", c.ifMatch)
		if got := PreconditionFailed(w, r, etag); got != c.failed {
			t.Errorf("If-Match %q: failed %v, want %v", c.ifMatch, got, c.failed)
		}
		if c.failed && (w.Code != http.StatusPreconditionFailed || w.Header().Get("ETag") != etag) {
			t.Errorf("If-Match %q: answered %d with ETag %q", c.ifMatch, w.Code, w.Header().Get("ETag"))
		}
	}
}

func TestReadBody(t *testing.T) {
	for _, c := range []struct {
		body   string
		ok     bool
		status int
	}{{`{"a":1}`, true, 200}, {"  \n", false, 400}, {strings.Repeat("x", MaxBody+1), false, 413}} {
		w := httptest.NewRecorder()
		b, ok := ReadBody(w, httptest.NewRequest(http.MethodPost, "/api/x", strings.NewReader(c.body)))
		if ok != c.ok || w.Code != c.status || (ok && string(b) != c.body) {
			t.Errorf("body of %d bytes: ok %v status %d, want %v %d", len(c.body), ok, w.Code, c.ok, c.status)
		}
	}
}

func TestCaller(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "/api/x", nil)
	if Actor(r) != "" || Credentialed(r) {
		t.Fatal("a request without a caller has one")
	}
	r = r.WithContext(WithCaller(r.Context(), "admin_token", true))
	if Actor(r) != "admin_token" || !Credentialed(r) {
		t.Errorf("caller %q credentialed %v", Actor(r), Credentialed(r))
	}
}
