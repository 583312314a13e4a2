package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpgw/mcpgw/internal/schemabound"
)

// CallOptions are what a call needs from the session making it.
type CallOptions struct {
	// Confirm asks the user to approve a delete or a Dangerous action (the gateway sends an
	// elicitation request) and reports whether they accepted. It is used by views generated
	// with Options.Elicitation; without it such a call is refused.
	Confirm func(ctx context.Context, message string) (bool, error)
	// Limit bounds the result (zero: no bound). A larger result is an isError result naming
	// the limit and the plugin; the provider learns the bound from its context
	// (MaxResultBytes), and the dispatcher refuses before writing an oversized result.
	Limit ResultLimit
	// Unvalidated, when set, is told of a call whose provider arguments are passed on
	// unchecked against the tool's input schema (only the gateway's own arguments are),
	// and why: "schema" (the tool's input schema would cost too much to validate against,
	// so it never is) or "arguments" (this call's arguments would).
	Unvalidated func(reason string)
}

// ErrUnknownTool is returned by ToolSet.Call for a name the set does not have.
var ErrUnknownTool = errors.New("unknown tool")

// Call runs the named tool. The error is for a name the set does not have (a protocol
// error); everything that goes wrong in the call itself is an isError result.
func (ts *ToolSet) Call(ctx context.Context, name string, args json.RawMessage, o CallOptions) (*Result, error) {
	t := ts.byName[name]
	if t == nil {
		return nil, fmt.Errorf("%w %q", ErrUnknownTool, name)
	}
	return t.Call(ctx, args, o), nil
}

// Call validates args (a JSON object, or empty for none) against the tool's input schema
// and the session's connections, asks for confirmation where the tool needs it, and calls
// the provider. Provider errors and panics become isError results with the provider's
// message.
func (t *Tool) Call(ctx context.Context, args json.RawMessage, o CallOptions) (res *Result) {
	a, err := decodeArgs(args)
	if err != nil {
		return errorResult("invalid arguments: %v", err)
	}
	if c, ok := a[argConnection].(string); ok && !t.connOK[c] {
		return errorResult("connection %q is not available to this session; use one of: %s", c, strings.Join(t.conns, ", "))
	}
	if t.confirm == confirmArg && a[argConfirm] != true {
		return errorResult("%s cannot be undone: ask the user, and call it again with \"confirm\": true once they agree", t.Def.Name)
	}
	why, err := t.validate(a)
	if err != nil {
		return errorResult("invalid arguments: %v", err)
	}
	if why != "" && o.Unvalidated != nil {
		o.Unvalidated(why)
	}
	if t.Op == OperationFind {
		if err := filtersAlias(a); err != nil {
			return errorResult("invalid arguments: %v", err)
		}
		if err := t.checkFilter(a[argFilter]); err != nil {
			return errorResult("invalid arguments: %v", err)
		}
	}
	if t.confirm == confirmAsk {
		if o.Confirm == nil {
			return errorResult("%s needs the user's confirmation, and this session cannot be asked", t.Def.Name)
		}
		ok, err := o.Confirm(ctx, t.confirmMessage(a))
		if err != nil {
			return errorResult("asking the user to confirm %s failed: %v", t.Def.Name, err)
		}
		if !ok {
			return errorResult("the user declined %s; nothing was changed", t.Def.Name)
		}
	}
	defer func() {
		if p := recover(); p != nil {
			res = errorResult("plugin %s failed: internal error: %v", t.cat.ID, p)
		}
	}()
	return t.dispatch(WithMaxResultBytes(ctx, o.Limit.Bytes), a, resultLimit{o.Limit, t.cat.ID})
}

// validate checks a against the tool's input schema when that is bounded for these
// arguments (schemabound), else only the gateway's own arguments against the control
// schema: the provider's part then reaches it as it is, and unvalidated says why.
func (t *Tool) validate(a map[string]any) (unvalidated string, err error) {
	unvalidated = schemabound.ReasonSchema
	if t.input != nil {
		if t.bound.Admits(a) {
			return "", t.input.Validate(a)
		}
		unvalidated = schemabound.ReasonArguments
	}
	ctrl := make(map[string]any, len(t.control))
	for n := range t.control {
		if v, ok := a[n]; ok {
			ctrl[n] = v
		}
	}
	if !t.ctrlBound.Admits(ctrl) {
		return "", fmt.Errorf("the tool's own arguments nest over %d levels or are too many to check; send fewer", schemabound.MaxArgsDepth)
	}
	return unvalidated, t.ctrl.Validate(ctrl)
}

func (t *Tool) dispatch(ctx context.Context, a map[string]any, lim resultLimit) *Result {
	p := t.cat.Plugin
	conn, _ := a[argConnection].(string)
	id, _ := a[argID].(string)
	ns, _ := a[argNamespace].(string)
	switch t.Op {
	case OperationGet:
		if jg, ok := p.(JSONGetter); ok {
			return lim.raw(jg.GetJSON(ctx, conn, t.Key, GetInput{ID: id, Namespace: ns}))
		}
		return lim.resource(p.Get(ctx, conn, t.Key, GetInput{ID: id, Namespace: ns}))
	case OperationDelete:
		return lim.resource(p.Delete(ctx, conn, t.Key, DeleteInput{ID: id, Namespace: ns}))
	case OperationList:
		return lim.page(p.List(ctx, conn, t.Key, listInput(a)))
	case OperationFind:
		in := FindInput{ListInput: listInput(a)}
		in.Filter.TextQuery, _ = a[argTextQuery].(string)
		preds, _ := a[argFilter].([]any)
		for _, raw := range preds {
			m, _ := raw.(map[string]any) // checked by the control schema
			field, _ := m["field"].(string)
			op, _ := m["operator"].(string)
			in.Filter.Predicates = append(in.Filter.Predicates, Predicate{Field: field, Operator: Operator(op), Value: m["value"]})
		}
		return lim.page(p.Find(ctx, conn, t.Key, in))
	case OperationCreate:
		return lim.resource(p.Create(ctx, conn, t.Key, CreateInput{Namespace: ns, Data: t.data(a)}))
	case OperationUpdate:
		return lim.resource(p.Update(ctx, conn, t.Key, UpdateInput{ID: id, Namespace: ns, Data: t.data(a)}))
	case OperationAction:
		ap, ok := p.(ActionProvider)
		if !ok {
			return errorResult("plugin %s has no actions", t.cat.ID)
		}
		r, err := ap.ExecuteAction(ctx, conn, t.Key, t.ActionID, ActionInput{ID: id, Namespace: ns, Params: t.data(a)})
		if err != nil {
			return lim.failed(err)
		}
		if r.Data != nil {
			return lim.structured(r.Data)
		}
		msg := r.Message
		if msg == "" {
			msg = "done"
		}
		return TextResult(msg)
	case OperationListConnections:
		cs, err := p.Connections(ctx)
		if err != nil {
			return lim.failed(err)
		}
		out := []any{}
		for _, c := range cs {
			if !t.connOK[c.ID] {
				continue
			}
			m := map[string]any{"id": c.ID, "status": string(c.Status)}
			if c.Name != "" {
				m["name"] = c.Name
			}
			if c.Description != "" {
				m["description"] = c.Description
			}
			out = append(out, m)
		}
		return lim.structured(map[string]any{"connections": out})
	case OperationListNamespaces:
		nss, err := p.Namespaces(ctx, conn)
		if err != nil {
			return lim.failed(err)
		}
		out := make([]any, len(nss))
		for i, n := range nss {
			out[i] = n
		}
		return lim.structured(map[string]any{"namespaces": out})
	case OperationListResourceTypes:
		return lim.structured(map[string]any{"resourceTypes": t.resourceTypes(conn)})
	}
	return errorResult("tool %s has no operation", t.Def.Name)
}

// resourceTypes lists the types of the tool's view (the tools sharing its catalogue and
// connections), optionally only those on conn.
func (t *Tool) resourceTypes(conn string) []any {
	byKey := map[string][]string{}
	for _, o := range t.siblings {
		if o.Key != "" {
			byKey[o.Key] = append(byKey[o.Key], o.Def.Name)
		}
	}
	out := []any{}
	for _, e := range t.cat.Types {
		tools, ok := byKey[e.Type.Key]
		if !ok {
			continue
		}
		var conns []any
		for _, c := range t.conns {
			if _, has := e.On[c]; has && (conn == "" || c == conn) {
				conns = append(conns, c)
			}
		}
		if len(conns) == 0 {
			continue
		}
		names := make([]any, len(tools))
		for i, n := range tools {
			names[i] = n
		}
		m := map[string]any{"key": e.Type.Key, "connections": conns, "tools": names, "capabilities": capabilityFlags(e.Caps)}
		if e.Type.Description != "" {
			m["description"] = e.Type.Description
		}
		out = append(out, m)
	}
	return out
}

// capabilityFlags are a type's capabilities as list_resource_types shows them: what the
// type offers, whatever this session may call of it (its tools say that).
func capabilityFlags(c Capabilities) map[string]any {
	return map[string]any{"canGet": c.CanGet, "canList": c.CanList, "canFind": c.CanFind, "canCreate": c.CanCreate,
		"canUpdate": c.CanUpdate, "canDelete": c.CanDelete, "filterable": c.Filterable, "hasSchema": c.HasSchema, "hasActions": c.HasActions}
}

func (t *Tool) confirmMessage(a map[string]any) string {
	what := t.Key
	if id, ok := a[argID].(string); ok {
		what += " " + strconv.Quote(id)
	}
	verb := "Delete"
	if t.Op == OperationAction {
		verb = "Run the dangerous action " + strconv.Quote(t.ActionID) + " on"
	}
	return fmt.Sprintf("%s %s on connection %q (plugin %s)? This cannot be undone.", verb, what, a[argConnection], t.cat.ID)
}

// data is the arguments that are not the tool's own: a resource's fields or an action's
// params.
func (t *Tool) data(a map[string]any) map[string]any {
	d := make(map[string]any, len(a))
	for k, v := range a {
		if !t.control[k] {
			d[k] = v
		}
	}
	return d
}

func listInput(a map[string]any) ListInput {
	var in ListInput
	if n, ok := a[argPageSize].(int64); ok {
		in.PageSize = int(n)
	}
	in.Cursor, _ = a[argCursor].(string)
	if nss, ok := a[argNamespaces].([]any); ok {
		for _, n := range nss {
			if s, ok := n.(string); ok {
				in.Namespaces = append(in.Namespaces, s)
			}
		}
	}
	return in
}

// checkFilter checks what the schema cannot say: each predicate's operator is one its
// field offers, and its value has the shape the operator needs.
// filtersAlias makes a find call's filters (the other name of filter) its filter; both
// at once is refused, since they could say different things.
func filtersAlias(a map[string]any) error {
	v, ok := a[argFilters]
	if !ok {
		return nil
	}
	if _, both := a[argFilter]; both {
		return fmt.Errorf("give filter or filters, not both (they are one argument under two names)")
	}
	a[argFilter] = v
	delete(a, argFilters)
	return nil
}

func (t *Tool) checkFilter(v any) error {
	preds, _ := v.([]any)
	for i, raw := range preds {
		m, _ := raw.(map[string]any)
		field, _ := m["field"].(string)
		op, _ := m["operator"].(string)
		f, ok := t.filters[field]
		if !ok {
			return fmt.Errorf("filter[%d]: %q is not a filter field", i, field)
		}
		if !slices.Contains(f.Operators, Operator(op)) {
			ops := make([]string, len(f.Operators))
			for j, o := range f.Operators {
				ops[j] = string(o)
			}
			return fmt.Errorf("filter[%d]: field %q does not take operator %q (it takes %s)", i, field, op, strings.Join(ops, ", "))
		}
		val, has := m["value"]
		switch Operator(op) {
		case OpIsNull:
			if _, ok := val.(bool); !ok {
				return fmt.Errorf("filter[%d]: is_null takes true or false", i)
			}
		case OpIn:
			list, ok := val.([]any)
			if !ok || len(list) == 0 {
				return fmt.Errorf("filter[%d]: in takes a non-empty array of values", i)
			}
			for _, x := range list {
				if err := scalarOf(f.Type, x); err != nil {
					return fmt.Errorf("filter[%d]: %v", i, err)
				}
			}
		default:
			if !has {
				return fmt.Errorf("filter[%d]: operator %q needs a value", i, op)
			}
			if err := scalarOf(f.Type, val); err != nil {
				return fmt.Errorf("filter[%d]: %v", i, err)
			}
			if Operator(op) == OpContains {
				if _, ok := val.(string); !ok {
					return fmt.Errorf("filter[%d]: contains takes a string", i)
				}
			}
		}
	}
	return nil
}

func scalarOf(ft FieldType, v any) error {
	ok := false
	switch ft {
	case FieldString:
		_, ok = v.(string)
	case FieldInteger:
		_, ok = v.(int64)
	case FieldNumber:
		switch v.(type) {
		case int64, float64:
			ok = true
		}
	case FieldBoolean:
		_, ok = v.(bool)
	default:
		switch v.(type) {
		case string, int64, float64, bool:
			ok = true
		}
	}
	if !ok {
		return fmt.Errorf("value %s is not a %s", describe(v), ft)
	}
	return nil
}

func describe(v any) string {
	b, err := json.Marshal(v)
	if err != nil || len(b) > 60 {
		return fmt.Sprintf("of type %T", v)
	}
	return string(b)
}

// decodeArgs reads a call's arguments: an object (empty or null for none). Numbers become
// int64 when integral and in range, float64 otherwise, so integer ids and values survive
// beyond 2^53.
func decodeArgs(raw json.RawMessage) (map[string]any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return map[string]any{}, nil
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
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("arguments must be a JSON object")
	}
	if err := numbers(m); err != nil {
		return nil, err
	}
	return m, nil
}

func numbers(v any) error {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if n, ok := e.(json.Number); ok {
				f, err := number(n)
				if err != nil {
					return err
				}
				x[k] = f
			} else if err := numbers(e); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range x {
			if n, ok := e.(json.Number); ok {
				f, err := number(n)
				if err != nil {
					return err
				}
				x[i] = f
			} else if err := numbers(e); err != nil {
				return err
			}
		}
	}
	return nil
}

func number(n json.Number) (any, error) {
	if i, err := n.Int64(); err == nil {
		return i, nil
	}
	f, err := n.Float64()
	if err != nil {
		return nil, fmt.Errorf("number %s is out of range", n)
	}
	if f == math.Trunc(f) && math.Abs(f) < 1<<62 {
		return int64(f), nil // 1.0, 2e3
	}
	return f, nil
}

func errorResult(format string, args ...any) *Result {
	return &Result{IsError: true, Content: []Content{{Type: "text", Text: fmt.Sprintf(format, args...)}}}
}
