package pluginproc

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcpgw/mcpgw/internal/pluginpb"
	"github.com/mcpgw/mcpgw/plugin"
)

// Remote is a provider in another process, as the host calls it. It implements
// plugin.Plugin; the value Launch returns also implements plugin.ActionProvider and
// plugin.Watcher when the remote provider does (Load and tool generation see the same
// optional parts as in-process). Every call's context reaches the remote provider: when
// it ends, the provider's context ends too.
type Remote struct {
	c    pluginpb.ProviderClient
	kill func() // ends the process (graceful first)

	stopWait context.CancelFunc
	exited   chan struct{}
	proc     *procRunner // its exit status

	mu      sync.Mutex
	exitErr error
	closing bool
	closed  bool
}

// Exited is closed when the plugin's process has gone (it exited, crashed or was killed
// by someone else), not when Close ended it. Err then says what happened.
func (r *Remote) Exited() <-chan struct{} { return r.exited }

// Err is why the process went, once Exited is closed.
func (r *Remote) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.exitErr
}

// Close ends the plugin's process: it asks it to stop, and kills it if it has not within a
// few seconds. It returns once the process is gone.
func (r *Remote) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed, r.closing = true, true
	r.mu.Unlock()
	r.stopWait()
	r.kill()
	return nil
}

// RefreshTimeout bounds a Refresh whose context has no deadline, so a plugin that never
// answers cannot hold up the host's catalogue re-reads.
const RefreshTimeout = time.Minute

// Refresh asks the remote provider to read its catalogues again (nothing when it has no
// Refresh method).
func (r *Remote) Refresh(ctx context.Context) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, RefreshTimeout)
		defer cancel()
	}
	_, _ = r.c.Refresh(ctx, &pluginpb.Empty{})
}

func (r *Remote) ResourceTypes(ctx context.Context) ([]plugin.ResourceType, error) {
	res, err := r.c.ResourceTypes(ctx, &pluginpb.Empty{})
	if err != nil {
		return nil, fromStatus(err)
	}
	out := make([]plugin.ResourceType, len(res.Types))
	for i, t := range res.Types {
		out[i] = plugin.ResourceType{Key: t.Key, Description: t.Description}
	}
	return out, nil
}

func (r *Remote) Capabilities(ctx context.Context, key string) (plugin.Capabilities, error) {
	c, err := r.c.Capabilities(ctx, &pluginpb.TypeRequest{Key: key})
	if err != nil {
		return plugin.Capabilities{}, fromStatus(err)
	}
	return plugin.Capabilities{CanGet: c.CanGet, CanList: c.CanList, CanFind: c.CanFind, CanCreate: c.CanCreate,
		CanUpdate: c.CanUpdate, CanDelete: c.CanDelete, Filterable: c.Filterable, HasSchema: c.HasSchema, HasActions: c.HasActions}, nil
}

func (r *Remote) FilterFields(ctx context.Context, conn, key string) ([]plugin.FilterField, error) {
	res, err := r.c.FilterFields(ctx, &pluginpb.TypeRequest{Connection: conn, Key: key})
	if err != nil {
		return nil, fromStatus(err)
	}
	out := make([]plugin.FilterField, len(res.Fields))
	for i, f := range res.Fields {
		ops := make([]plugin.Operator, len(f.Operators))
		for j, o := range f.Operators {
			ops[j] = plugin.Operator(o)
		}
		out[i] = plugin.FilterField{Field: f.Field, Type: plugin.FieldType(f.Type), Operators: ops, Description: f.Description}
	}
	return out, nil
}

func (r *Remote) ResourceSchema(ctx context.Context, conn, key string) (*jsonschema.Schema, error) {
	res, err := r.c.ResourceSchema(ctx, &pluginpb.TypeRequest{Connection: conn, Key: key})
	if err != nil {
		return nil, fromStatus(err)
	}
	return decodeSchema(res.Schema)
}

func resource(res *pluginpb.ResourceResponse, err error) (plugin.Resource, error) {
	if err != nil {
		return nil, fromStatus(err)
	}
	return decodeObject(res.Resource)
}

func page(res *pluginpb.PageResponse, err error) (plugin.Page, error) {
	if err != nil {
		return plugin.Page{}, fromStatus(err)
	}
	pg := plugin.Page{NextCursor: res.NextCursor, Items: make([]plugin.Resource, len(res.Items))}
	for i, b := range res.Items {
		m, err := decodeObject(b)
		if err != nil {
			return plugin.Page{}, err
		}
		pg.Items[i] = m
	}
	return pg, nil
}

func listRequest(conn, key string, in plugin.ListInput) *pluginpb.ListRequest {
	return &pluginpb.ListRequest{Connection: conn, Key: key, Namespaces: in.Namespaces, PageSize: int64(in.PageSize), Cursor: in.Cursor}
}

func (r *Remote) Get(ctx context.Context, conn, key string, in plugin.GetInput) (plugin.Resource, error) {
	return resource(r.c.Get(ctx, &pluginpb.GetRequest{Connection: conn, Key: key, Id: in.ID, Namespace: in.Namespace}))
}

// GetJSON is Get with the resource as the plugin sent it (plugin.JSONGetter): the
// dispatcher passes it through instead of decoding it and writing it again.
func (r *Remote) GetJSON(ctx context.Context, conn, key string, in plugin.GetInput) (json.RawMessage, error) {
	res, err := r.c.Get(ctx, &pluginpb.GetRequest{Connection: conn, Key: key, Id: in.ID, Namespace: in.Namespace})
	if err != nil {
		return nil, fromStatus(err)
	}
	return res.Resource, nil
}

func (r *Remote) Delete(ctx context.Context, conn, key string, in plugin.DeleteInput) (plugin.Resource, error) {
	return resource(r.c.Delete(ctx, &pluginpb.GetRequest{Connection: conn, Key: key, Id: in.ID, Namespace: in.Namespace}))
}

func (r *Remote) List(ctx context.Context, conn, key string, in plugin.ListInput) (plugin.Page, error) {
	return page(r.c.List(ctx, listRequest(conn, key, in)))
}

func (r *Remote) Find(ctx context.Context, conn, key string, in plugin.FindInput) (plugin.Page, error) {
	req := &pluginpb.FindRequest{List: listRequest(conn, key, in.ListInput), TextQuery: in.Filter.TextQuery}
	for _, p := range in.Filter.Predicates {
		b, err := encodeJSON(p.Value)
		if err != nil {
			return plugin.Page{}, fmt.Errorf("predicate on %q: the value cannot be written as JSON: %v", p.Field, err)
		}
		req.Predicates = append(req.Predicates, &pluginpb.Predicate{Field: p.Field, Operator: string(p.Operator), Value: b})
	}
	return page(r.c.Find(ctx, req))
}

func (r *Remote) Create(ctx context.Context, conn, key string, in plugin.CreateInput) (plugin.Resource, error) {
	b, err := encodeJSON(in.Data)
	if err != nil {
		return nil, fmt.Errorf("the resource cannot be written as JSON: %v", err)
	}
	return resource(r.c.Create(ctx, &pluginpb.CreateRequest{Connection: conn, Key: key, Namespace: in.Namespace, Data: b}))
}

func (r *Remote) Update(ctx context.Context, conn, key string, in plugin.UpdateInput) (plugin.Resource, error) {
	b, err := encodeJSON(in.Data)
	if err != nil {
		return nil, fmt.Errorf("the resource cannot be written as JSON: %v", err)
	}
	return resource(r.c.Update(ctx, &pluginpb.UpdateRequest{Connection: conn, Key: key, Id: in.ID, Namespace: in.Namespace, Data: b}))
}

func (r *Remote) Connections(ctx context.Context) ([]plugin.Connection, error) {
	res, err := r.c.Connections(ctx, &pluginpb.Empty{})
	if err != nil {
		return nil, fromStatus(err)
	}
	out := make([]plugin.Connection, len(res.Connections))
	for i, c := range res.Connections {
		out[i] = plugin.Connection{ID: c.Id, Name: c.Name, Status: plugin.ConnectionStatus(c.Status), Description: c.Description}
	}
	return out, nil
}

func (r *Remote) Namespaces(ctx context.Context, conn string) ([]string, error) {
	res, err := r.c.Namespaces(ctx, &pluginpb.NamespacesRequest{Connection: conn})
	if err != nil {
		return nil, fromStatus(err)
	}
	return res.Namespaces, nil
}

// remoteActions adds plugin.ActionProvider.
type remoteActions struct{ r *Remote }

func (a remoteActions) Actions(ctx context.Context, conn, key string) ([]plugin.Action, error) {
	res, err := a.r.c.Actions(ctx, &pluginpb.TypeRequest{Connection: conn, Key: key})
	if err != nil {
		return nil, fromStatus(err)
	}
	out := make([]plugin.Action, len(res.Actions))
	for i, x := range res.Actions {
		ps, err := decodeSchema(x.ParamsSchema)
		if err != nil {
			return nil, fmt.Errorf("action %q: %v", x.Id, err)
		}
		os, err := decodeSchema(x.OutputSchema)
		if err != nil {
			return nil, fmt.Errorf("action %q: %v", x.Id, err)
		}
		out[i] = plugin.Action{ID: x.Id, Description: x.Description, ParamsSchema: ps, OutputSchema: os,
			Dangerous: x.Dangerous, Idempotent: x.Idempotent, ReadOnly: x.ReadOnly, Collection: x.Collection}
	}
	return out, nil
}

func (a remoteActions) ExecuteAction(ctx context.Context, conn, key, actionID string, in plugin.ActionInput) (plugin.ActionResult, error) {
	b, err := encodeJSON(in.Params)
	if err != nil {
		return plugin.ActionResult{}, fmt.Errorf("the action's parameters cannot be written as JSON: %v", err)
	}
	res, err := a.r.c.ExecuteAction(ctx, &pluginpb.ExecuteActionRequest{Connection: conn, Key: key, Action: actionID, Id: in.ID, Namespace: in.Namespace, Params: b})
	if err != nil {
		return plugin.ActionResult{}, fromStatus(err)
	}
	data, err := decodeObject(res.Data)
	if err != nil {
		return plugin.ActionResult{}, err
	}
	return plugin.ActionResult{Data: data, Message: res.Message}, nil
}

// remoteWatcher adds plugin.Watcher.
type remoteWatcher struct{ r *Remote }

// subscriberBuffer is how many events wait for a slow subscriber before the stream from
// the plugin waits for it (and, upstream, the provider drops it by its own rule).
const subscriberBuffer = 64

func (w remoteWatcher) Subscribe(ctx context.Context, conn, key string) (<-chan plugin.Event, error) {
	ctx, cancel := context.WithCancel(ctx)
	st, err := w.r.c.Subscribe(ctx, &pluginpb.TypeRequest{Connection: conn, Key: key})
	if err != nil {
		cancel()
		return nil, fromStatus(err)
	}
	first, err := st.Recv()
	if err != nil {
		cancel()
		return nil, fromStatus(err)
	}
	if !first.Subscribed {
		cancel()
		return nil, fmt.Errorf("the plugin answered a subscription with an event before confirming it")
	}
	ch := make(chan plugin.Event, subscriberBuffer)
	go func() {
		defer close(ch)
		defer cancel()
		for {
			m, err := st.Recv()
			if err != nil {
				return // ctx ended, the provider closed the channel, or the process went
			}
			if m.Event == nil {
				continue
			}
			e := plugin.Event{Type: plugin.EventType(m.Event.Type), Connection: m.Event.Connection, Key: m.Event.Key,
				ID: m.Event.Id, Namespace: m.Event.Namespace}
			select {
			case ch <- e:
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch, nil
}

// The shapes Launch returns, by the optional parts the remote provider has.
type (
	withActions struct {
		*Remote
		remoteActions
	}
	withWatcher struct {
		*Remote
		remoteWatcher
	}
	withBoth struct {
		*Remote
		remoteActions
		remoteWatcher
	}
)

// shaped returns r with the optional interfaces the remote provider implements.
func shaped(r *Remote, actions, watcher bool) plugin.Plugin {
	switch {
	case actions && watcher:
		return withBoth{r, remoteActions{r}, remoteWatcher{r}}
	case actions:
		return withActions{r, remoteActions{r}}
	case watcher:
		return withWatcher{r, remoteWatcher{r}}
	}
	return r
}
