// Package admin is the gateway's admin API: its route table, router, guard and handlers,
// and the JSON answers they share; it reaches the running gateway only through Port.
package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"reflect"
	"slices"
	"strings"
)

// Error answers status with a JSON body {"error": msg}.
func Error(w http.ResponseWriter, status int, msg string) {
	JSON(w, status, map[string]string{"error": msg})
}

// JSON answers status with v as indented JSON.
func JSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.MarshalIndent(v, "", "  ")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// FieldError is one problem with a request: the field it concerns (a config path such as
// servers.docs.url, or a JSON path of the body) and what is wrong.
type FieldError struct {
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
	// Hint is what the user can do about it, when the config model knows.
	Hint string `json:"hint,omitempty"`
}

// WithField is the message prefixed by its field, when it has one.
func (fe FieldError) WithField() string {
	if fe.Field == "" {
		return fe.Message
	}
	return fe.Field + ": " + fe.Message
}

// ErrorBody is every admin API error answer: error sums it up; errors and warnings list
// the problems field by field.
type ErrorBody struct {
	Error    string       `json:"error"`
	Errors   []FieldError `json:"errors,omitempty"`
	Warnings []FieldError `json:"warnings,omitempty"`
}

// FieldErrors answers status with an ErrorBody: summary, then the problems field by field.
func FieldErrors(w http.ResponseWriter, status int, summary string, errs, warns []FieldError) {
	JSON(w, status, ErrorBody{Error: summary, Errors: errs, Warnings: warns})
}

// ReadFailed answers a body that could not be read: 408 when it did not arrive in time
// (http.body_timeout, http.body_min_rate), 400 otherwise.
func ReadFailed(w http.ResponseWriter, err error) {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		Error(w, http.StatusRequestTimeout, "reading the body: "+err.Error())
		return
	}
	Error(w, http.StatusBadRequest, "reading the body: "+err.Error())
}

// MaxBody bounds an admin request body.
const MaxBody = 1 << 20

// ReadBody reads a request body, bounded; an empty one is an error.
func ReadBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	b, err := io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
	switch {
	case err != nil:
		ReadFailed(w, err)
		return nil, false
	case len(b) > MaxBody:
		Error(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body larger than %d bytes", MaxBody))
		return nil, false
	case len(bytes.TrimSpace(b)) == 0:
		FieldErrors(w, http.StatusBadRequest, "empty body: a JSON object is expected", []FieldError{{Message: "empty body: a JSON object is expected"}}, nil)
		return nil, false
	}
	return b, true
}

// DecodeStrict decodes a JSON object into v (a pointer to a struct). Bad JSON, a field v
// does not have (at any depth, named by its path: "meta.colour"), and a value of the wrong
// type (named by its path) are reported as field errors. aliases maps accepted
// alternative top-level names to the field they stand for.
func DecodeStrict(body []byte, v any, aliases map[string]string) []FieldError {
	var generic any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&generic); err != nil {
		return []FieldError{{Message: "bad JSON: " + jsonErrorText(body, err)}}
	}
	if dec.More() {
		return []FieldError{{Message: "bad JSON: more than one value in the body"}}
	}
	obj, ok := generic.(map[string]any)
	if !ok {
		return []FieldError{{Message: "bad JSON: the body must be a JSON object"}}
	}
	for alias, field := range aliases {
		if a, ok := obj[alias]; ok {
			if _, both := obj[field]; both {
				return []FieldError{{Field: alias, Message: fmt.Sprintf("%s and %s are the same field; send one", alias, field)}}
			}
			obj[field] = a
			delete(obj, alias)
		}
	}
	if errs := unknownFields(obj, reflect.TypeOf(v), ""); len(errs) > 0 {
		return errs
	}
	clean, _ := json.Marshal(obj)
	if err := json.Unmarshal(clean, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return []FieldError{{Field: bodyPath(obj, te.Field), Message: fmt.Sprintf("must be %s, not a JSON %s", typeWord(te.Type), te.Value)}}
		}
		return []FieldError{{Message: "bad JSON: " + err.Error()}}
	}
	return nil
}

// bodyPath turns encoding/json's Go field path (which names embedded structs:
// "ServerDoc.args") into the path of keys the body has ("args").
func bodyPath(obj map[string]any, goPath string) string {
	var keys []string
	var cur any = obj
	for _, seg := range strings.Split(goPath, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			keys = append(keys, seg)
			continue
		}
		if v, ok := m[seg]; ok {
			keys = append(keys, seg)
			cur = v
		}
	}
	return strings.Join(keys, ".")
}

// jsonErrorText says what is wrong with body and where.
func jsonErrorText(body []byte, err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line := 1 + bytes.Count(body[:min(int(se.Offset), len(body))], []byte("\n"))
		return fmt.Sprintf("%v (line %d, byte %d)", se, line, se.Offset)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "the JSON ends too early"
	}
	return err.Error()
}

func typeWord(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Float64:
		return "a number"
	case reflect.Slice:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return t.String()
}

// unknownFields lists the keys of v (decoded JSON) that type t has no field for, by path.
func unknownFields(v any, t reflect.Type, path string) []FieldError {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	join := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	var out []FieldError
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil // a type error; Unmarshal names it
		}
		fields := jsonFields(t)
		for _, k := range sortedKeys(obj) {
			ft, ok := fields[k]
			if !ok {
				out = append(out, FieldError{Field: join(k), Message: fmt.Sprintf("unknown field %q", join(k))})
				continue
			}
			out = append(out, unknownFields(obj[k], ft, join(k))...)
		}
	case reflect.Map:
		if obj, ok := v.(map[string]any); ok {
			for _, k := range sortedKeys(obj) {
				out = append(out, unknownFields(obj[k], t.Elem(), join(k))...)
			}
		}
	case reflect.Slice:
		if arr, ok := v.([]any); ok && t != reflect.TypeOf(json.RawMessage(nil)) {
			for i, e := range arr {
				out = append(out, unknownFields(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i))...)
			}
		}
	}
	return out
}

// jsonFields maps the JSON names of a struct's fields (embedded structs' included) to
// their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	m := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			for k, v := range jsonFields(f.Type) {
				if _, shadowed := m[k]; !shadowed {
					m[k] = v
				}
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		m[name] = f.Type
	}
	return m
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// MergePatch applies an RFC 7396 JSON merge patch to target.
func MergePatch(target, patch map[string]any) map[string]any {
	if target == nil {
		target = map[string]any{}
	}
	for k, pv := range patch {
		if pv == nil {
			delete(target, k)
			continue
		}
		if pm, ok := pv.(map[string]any); ok {
			tm, _ := target[k].(map[string]any)
			target[k] = MergePatch(tm, pm)
			continue
		}
		target[k] = pv
	}
	return target
}

// ETag quotes a content hash as an ETag.
func ETag(hash string) string { return `"` + hash + `"` }

// PreconditionFailed answers 412 when the request's If-Match names another version of the
// entity than etag (If-Match: * matches any existing entity).
func PreconditionFailed(w http.ResponseWriter, r *http.Request, etag string) bool {
	im := strings.TrimSpace(r.Header.Get("If-Match"))
	if im == "" || im == "*" {
		return false
	}
	for _, tag := range strings.Split(im, ",") {
		tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
		if tag == etag {
			return false
		}
	}
	w.Header().Set("ETag", etag)
	Error(w, http.StatusPreconditionFailed, "If-Match "+im+" does not match the current version "+etag+"; read it again and retry")
	return true
}

type actorKey struct{}

// credentialKey marks an admin request whose caller showed a credential (Credentialed).
type credentialKey struct{}

// Actor names who made an admin request, for the audit log.
func Actor(r *http.Request) string {
	a, _ := r.Context().Value(actorKey{}).(string)
	return a
}

// Credentialed reports whether an admin request's caller showed an admin credential (the
// admin token, the local token, an admin key or an admin JWT), directly or by the UI
// sign-in it made with one; a local owner let in without one has not.
func Credentialed(r *http.Request) bool {
	c, _ := r.Context().Value(credentialKey{}).(bool)
	return c
}

// WithCaller marks ctx as an admin request's: who made it (Actor) and whether they showed
// a credential (Credentialed).
func WithCaller(ctx context.Context, actor string, credentialed bool) context.Context {
	ctx = context.WithValue(ctx, actorKey{}, actor)
	return context.WithValue(ctx, credentialKey{}, credentialed)
}
