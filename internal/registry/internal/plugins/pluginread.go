package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpgw/mcpgw/internal/registry/internal/catalog"
	"github.com/mcpgw/mcpgw/plugin"
)

// ErrNoWatch is returned by Watch for a plugin whose provider reports no changes.
var ErrNoWatch = errors.New("the plugin does not report changes")

// Watch subscribes to the changes of a resource type on a connection, for as long as ctx
// lasts or the provider runs: the channel closes when ctx ends, when the plugin stops or
// is reloaded, or when the subscriber falls behind.
func (p *Plugin) Watch(ctx context.Context, conn, key string) (<-chan plugin.Event, error) {
	cat := p.Catalog()
	if cat == nil {
		return nil, fmt.Errorf("plugin %q is not up", p.Name)
	}
	w, ok := cat.Plugin.(plugin.Watcher)
	if !ok {
		return nil, ErrNoWatch
	}
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(p.ctx, cancel)
	ch, err := w.Subscribe(ctx, conn, key)
	if err != nil {
		stop()
		cancel()
		return nil, err
	}
	out := make(chan plugin.Event, 16)
	go func() {
		defer close(out)
		defer stop()
		defer cancel()
		for e := range ch {
			select {
			case out <- e:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

// ReadResource reads a plugin ref as JSON: one resource (Get), or the first page of a type
// (List, in the ref's namespace when it has one).
func (p *Plugin) ReadResource(ctx context.Context, r catalog.PluginRef) (json.RawMessage, error) {
	cat := p.Catalog()
	if cat == nil {
		return nil, fmt.Errorf("plugin %q is not up", p.Name)
	}
	p.calls.Add(1)
	defer p.calls.Done()
	var cancel context.CancelFunc
	if p.Def.CallTimeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, p.Def.CallTimeout)
	} else {
		ctx, cancel = context.WithCancel(ctx)
	}
	defer cancel()
	stop := context.AfterFunc(p.ctx, cancel)
	defer stop()
	var v any
	var err error
	func() {
		defer func() {
			if x := recover(); x != nil {
				err = fmt.Errorf("internal error: %v", x)
			}
		}()
		if r.ID != "" {
			v, err = cat.Plugin.Get(ctx, r.Conn, r.Key, plugin.GetInput{ID: r.ID, Namespace: r.Namespace})
			return
		}
		in := plugin.ListInput{PageSize: catalog.PluginPageSize}
		if r.Namespace != "" {
			in.Namespaces = []string{r.Namespace}
		}
		var pg plugin.Page
		pg, err = cat.Plugin.List(ctx, r.Conn, r.Key, in)
		if err == nil {
			if pg.Items == nil {
				pg.Items = []plugin.Resource{}
			}
			m := map[string]any{"items": pg.Items}
			if pg.NextCursor != "" {
				m["nextCursor"] = pg.NextCursor
			}
			v = m
		}
	}()
	if err != nil {
		return nil, err
	}
	// The bound the caller set (plugin.WithMaxResultBytes): the resource is refused before
	// it is written when its values alone are larger.
	if limit := plugin.MaxResultBytes(ctx); limit > 0 && plugin.JSONSizeAtLeast(v, limit+1) {
		return nil, fmt.Errorf("plugin %q: the resource is larger than %d bytes: %w", p.Name, limit, plugin.ErrTooLarge)
	}
	b, err := json.Marshal(v)
	if limit := plugin.MaxResultBytes(ctx); err == nil && limit > 0 && len(b) > limit {
		return nil, fmt.Errorf("plugin %q: the resource is %d bytes, larger than %d: %w", p.Name, len(b), limit, plugin.ErrTooLarge)
	}
	return b, err
}
