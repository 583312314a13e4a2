package pluginproc

import (
	"context"
	"encoding/json"
	"io"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/mcpgw/mcpgw/internal/pluginpb"
	"github.com/mcpgw/mcpgw/plugin"
)

// server answers the host with the provider open made.
type server struct {
	pluginpb.UnimplementedProviderServer
	open OpenFunc
	// maxSend bounds one answer to the host (MaxMessageEnv; 0: none).
	maxSend int

	mu     sync.Mutex
	prov   plugin.Plugin
	closed bool
}

func (s *server) provider() (plugin.Plugin, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.prov == nil {
		return nil, status.Error(codes.FailedPrecondition, "the plugin was not opened")
	}
	return s.prov, nil
}

func (s *server) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.prov.(io.Closer); ok && !s.closed {
		s.closed = true
		_ = c.Close()
	}
}

func (s *server) Open(ctx context.Context, req *pluginpb.OpenRequest) (*pluginpb.OpenResponse, error) {
	s.mu.Lock()
	opened := s.prov != nil
	s.mu.Unlock()
	if opened {
		return nil, status.Error(codes.FailedPrecondition, "the plugin is open already")
	}
	p, err := s.open(ctx, json.RawMessage(req.Config))
	if err != nil {
		return nil, toStatus(err)
	}
	if p == nil {
		return nil, status.Error(codes.Internal, "the plugin's open function returned no provider")
	}
	s.mu.Lock()
	s.prov = p
	s.mu.Unlock()
	_, actions := p.(plugin.ActionProvider)
	_, watcher := p.(plugin.Watcher)
	_, refresh := p.(interface{ Refresh(context.Context) })
	return &pluginpb.OpenResponse{Actions: actions, Watcher: watcher, Refresh: refresh}, nil
}

func (s *server) Refresh(ctx context.Context, _ *pluginpb.Empty) (*pluginpb.Empty, error) {
	p, err := s.provider()
	if err != nil {
		return nil, err
	}
	if rf, ok := p.(interface{ Refresh(context.Context) }); ok {
		rf.Refresh(ctx)
	}
	return &pluginpb.Empty{}, nil
}

func (s *server) Wait(_ *pluginpb.Empty, st grpc.ServerStreamingServer[pluginpb.Empty]) error {
	<-st.Context().Done()
	return nil
}

func (s *server) ResourceTypes(ctx context.Context, _ *pluginpb.Empty) (*pluginpb.ResourceTypesResponse, error) {
	p, err := s.provider()
	if err != nil {
		return nil, err
	}
	ts, err := p.ResourceTypes(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	out := &pluginpb.ResourceTypesResponse{}
	for _, t := range ts {
		out.Types = append(out.Types, &pluginpb.ResourceType{Key: t.Key, Description: t.Description})
	}
	return out, nil
}

func (s *server) Capabilities(ctx context.Context, req *pluginpb.TypeRequest) (*pluginpb.CapabilitiesResponse, error) {
	p, err := s.provider()
	if err != nil {
		return nil, err
	}
	c, err := p.Capabilities(ctx, req.Key)
	if err != nil {
		return nil, toStatus(err)
	}
	return &pluginpb.CapabilitiesResponse{CanGet: c.CanGet, CanList: c.CanList, CanFind: c.CanFind, CanCreate: c.CanCreate,
		CanUpdate: c.CanUpdate, CanDelete: c.CanDelete, Filterable: c.Filterable, HasSchema: c.HasSchema, HasActions: c.HasActions}, nil
}

func (s *server) FilterFields(ctx context.Context, req *pluginpb.TypeRequest) (*pluginpb.FilterFieldsResponse, error) {
	p, err := s.provider()
	if err != nil {
		return nil, err
	}
	fs, err := p.FilterFields(ctx, req.Connection, req.Key)
	if err != nil {
		return nil, toStatus(err)
	}
	out := &pluginpb.FilterFieldsResponse{}
	for _, f := range fs {
		ops := make([]string, len(f.Operators))
		for i, o := range f.Operators {
			ops[i] = string(o)
		}
		out.Fields = append(out.Fields, &pluginpb.FilterField{Field: f.Field, Type: string(f.Type), Operators: ops, Description: f.Description})
	}
	return out, nil
}

func (s *server) ResourceSchema(ctx context.Context, req *pluginpb.TypeRequest) (*pluginpb.SchemaResponse, error) {
	p, err := s.provider()
	if err != nil {
		return nil, err
	}
	sc, err := p.ResourceSchema(ctx, req.Connection, req.Key)
	if err != nil {
		return nil, toStatus(err)
	}
	b, err := encodeSchema(sc)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "the resource schema cannot be written as JSON: %v", err)
	}
	return &pluginpb.SchemaResponse{Schema: b}, nil
}

func (s *server) resourceResponse(r plugin.Resource, err error) (*pluginpb.ResourceResponse, error) {
	if err != nil {
		return nil, toStatus(err)
	}
	if err := s.tooLarge(r); err != nil {
		return nil, err
	}
	b, err := encodeJSON(r)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "the plugin's result cannot be written as JSON: %v", err)
	}
	return &pluginpb.ResourceResponse{Resource: b}, nil
}

func (s *server) pageResponse(pg plugin.Page, err error) (*pluginpb.PageResponse, error) {
	if err != nil {
		return nil, toStatus(err)
	}
	if err := s.tooLarge(pg.Items); err != nil {
		return nil, err
	}
	out := &pluginpb.PageResponse{NextCursor: pg.NextCursor, Items: make([][]byte, len(pg.Items))}
	for i, r := range pg.Items {
		b, err := json.Marshal(r)
		if err != nil {
			return nil, status.Errorf(codes.Internal, "the plugin's result cannot be written as JSON: %v", err)
		}
		out.Items[i] = b
	}
	return out, nil
}

func (s *server) Get(ctx context.Context, req *pluginpb.GetRequest) (*pluginpb.ResourceResponse, error) {
	p, err := s.provider()
	if err != nil {
		return nil, err
	}
	return s.resourceResponse(p.Get(ctx, req.Connection, req.Key, plugin.GetInput{ID: req.Id, Namespace: req.Namespace}))
}

func (s *server) Delete(ctx context.Context, req *pluginpb.GetRequest) (*pluginpb.ResourceResponse, error) {
	p, err := s.provider()
	if err != nil {
		return nil, err
	}
	return s.resourceResponse(p.Delete(ctx, req.Connection, req.Key, plugin.DeleteInput{ID: req.Id, Namespace: req.Namespace}))
}

func listInput(req *pluginpb.ListRequest) plugin.ListInput {
	if req == nil {
		return plugin.ListInput{}
	}
	return plugin.ListInput{Namespaces: req.Namespaces, PageSize: int(req.PageSize), Cursor: req.Cursor}
}

func (s *server) List(ctx context.Context, req *pluginpb.ListRequest) (*pluginpb.PageResponse, error) {
	p, err := s.provider()
	if err != nil {
		return nil, err
	}
	return s.pageResponse(p.List(ctx, req.Connection, req.Key, listInput(req)))
}

func (s *server) Find(ctx context.Context, req *pluginpb.FindRequest) (*pluginpb.PageResponse, error) {
	p, err := s.provider()
	if err != nil {
		return nil, err
	}
	in := plugin.FindInput{ListInput: listInput(req.List), Filter: plugin.Filter{TextQuery: req.TextQuery}}
	for _, pr := range req.Predicates {
		v, err := plugin.DecodeValue(pr.Value)
		if err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "predicate on %q: the value is not JSON: %v", pr.Field, err)
		}
		in.Filter.Predicates = append(in.Filter.Predicates, plugin.Predicate{Field: pr.Field, Operator: plugin.Operator(pr.Operator), Value: v})
	}
	conn, key := "", ""
	if req.List != nil {
		conn, key = req.List.Connection, req.List.Key
	}
	return s.pageResponse(p.Find(ctx, conn, key, in))
}

func (s *server) Create(ctx context.Context, req *pluginpb.CreateRequest) (*pluginpb.ResourceResponse, error) {
	p, err := s.provider()
	if err != nil {
		return nil, err
	}
	data, err := decodeObject(req.Data)
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	return s.resourceResponse(p.Create(ctx, req.Connection, req.Key, plugin.CreateInput{Namespace: req.Namespace, Data: data}))
}

func (s *server) Update(ctx context.Context, req *pluginpb.UpdateRequest) (*pluginpb.ResourceResponse, error) {
	p, err := s.provider()
	if err != nil {
		return nil, err
	}
	data, err := decodeObject(req.Data)
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	return s.resourceResponse(p.Update(ctx, req.Connection, req.Key, plugin.UpdateInput{ID: req.Id, Namespace: req.Namespace, Data: data}))
}

func (s *server) actions() (plugin.ActionProvider, error) {
	p, err := s.provider()
	if err != nil {
		return nil, err
	}
	ap, ok := p.(plugin.ActionProvider)
	if !ok {
		return nil, status.Error(codes.Unimplemented, "the plugin has no actions")
	}
	return ap, nil
}

func (s *server) Actions(ctx context.Context, req *pluginpb.TypeRequest) (*pluginpb.ActionsResponse, error) {
	ap, err := s.actions()
	if err != nil {
		return nil, err
	}
	as, err := ap.Actions(ctx, req.Connection, req.Key)
	if err != nil {
		return nil, toStatus(err)
	}
	out := &pluginpb.ActionsResponse{}
	for _, a := range as {
		ps, err := encodeSchema(a.ParamsSchema)
		if err != nil {
			return nil, status.Errorf(codes.Internal, "action %q: the params schema cannot be written as JSON: %v", a.ID, err)
		}
		os, err := encodeSchema(a.OutputSchema)
		if err != nil {
			return nil, status.Errorf(codes.Internal, "action %q: the output schema cannot be written as JSON: %v", a.ID, err)
		}
		out.Actions = append(out.Actions, &pluginpb.Action{Id: a.ID, Description: a.Description, ParamsSchema: ps, OutputSchema: os,
			Dangerous: a.Dangerous, Idempotent: a.Idempotent, ReadOnly: a.ReadOnly, Collection: a.Collection})
	}
	return out, nil
}

func (s *server) ExecuteAction(ctx context.Context, req *pluginpb.ExecuteActionRequest) (*pluginpb.ActionResultResponse, error) {
	ap, err := s.actions()
	if err != nil {
		return nil, err
	}
	params, err := decodeObject(req.Params)
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	res, err := ap.ExecuteAction(ctx, req.Connection, req.Key, req.Action, plugin.ActionInput{ID: req.Id, Namespace: req.Namespace, Params: params})
	if err != nil {
		return nil, toStatus(err)
	}
	if err := s.tooLarge(res.Data); err != nil {
		return nil, err
	}
	data, err := encodeJSON(res.Data)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "the plugin's result cannot be written as JSON: %v", err)
	}
	return &pluginpb.ActionResultResponse{Data: data, Message: res.Message}, nil
}

func (s *server) Connections(ctx context.Context, _ *pluginpb.Empty) (*pluginpb.ConnectionsResponse, error) {
	p, err := s.provider()
	if err != nil {
		return nil, err
	}
	cs, err := p.Connections(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	out := &pluginpb.ConnectionsResponse{}
	for _, c := range cs {
		out.Connections = append(out.Connections, &pluginpb.Connection{Id: c.ID, Name: c.Name, Status: string(c.Status), Description: c.Description})
	}
	return out, nil
}

func (s *server) Namespaces(ctx context.Context, req *pluginpb.NamespacesRequest) (*pluginpb.NamespacesResponse, error) {
	p, err := s.provider()
	if err != nil {
		return nil, err
	}
	ns, err := p.Namespaces(ctx, req.Connection)
	if err != nil {
		return nil, toStatus(err)
	}
	return &pluginpb.NamespacesResponse{Namespaces: ns}, nil
}

func (s *server) Subscribe(req *pluginpb.TypeRequest, st grpc.ServerStreamingServer[pluginpb.SubscribeResponse]) error {
	p, err := s.provider()
	if err != nil {
		return err
	}
	w, ok := p.(plugin.Watcher)
	if !ok {
		return status.Error(codes.Unimplemented, "the plugin does not watch resources")
	}
	ctx := st.Context()
	ch, err := w.Subscribe(ctx, req.Connection, req.Key)
	if err != nil {
		return toStatus(err)
	}
	if err := st.Send(&pluginpb.SubscribeResponse{Subscribed: true}); err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case e, ok := <-ch:
			if !ok {
				return nil
			}
			ev := &pluginpb.Event{Type: string(e.Type), Connection: e.Connection, Key: e.Key, Id: e.ID, Namespace: e.Namespace}
			if err := st.Send(&pluginpb.SubscribeResponse{Event: ev}); err != nil {
				return err
			}
		}
	}
}
