package pluginproc

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"

	"github.com/mcpgw/mcpgw/internal/pluginpb"
	"github.com/mcpgw/mcpgw/plugin"
)

// OpenFunc makes a plugin executable's provider from the config the host sends (the
// plugin's `config` in mcpgw.yaml, as JSON; empty when there is none). It runs once, when
// the host connects. An error is shown on the host as the reason the plugin is down.
type OpenFunc func(ctx context.Context, config json.RawMessage) (plugin.Plugin, error)

// Serve answers the host that started this process, with the provider open makes, until
// the host goes away; then it closes the provider (when it is an io.Closer) and exits the
// process. Started by hand (without the host's handshake cookie), it says it is a plugin
// and exits with status 1. Package plugin/serve wraps it for a plugin's main.
//
// Serve sets slog's default logger to write JSON lines on stderr, which the host logs
// with their level under the plugin's name.
func Serve(open OpenFunc) {
	slog.SetDefault(slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{
		Level:       slog.LevelDebug,
		ReplaceAttr: hclogKeys,
	})))
	srv := &server{open: open, maxSend: maxSendFromEnv()}
	gone := make(chan struct{})
	goplugin.Serve(&goplugin.ServeConfig{
		HandshakeConfig: handshake(),
		Plugins:         goplugin.PluginSet{pluginName: &grpcPlugin{srv: srv}},
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			opts = append(opts, grpc.StatsHandler(&hostWatch{gone: gone}),
				grpc.ChainUnaryInterceptor(recoverUnary, srv.limitUnary), grpc.ChainStreamInterceptor(recoverStream))
			opts = append(opts, serverOptions(srv.maxSend)...)
			s := grpc.NewServer(opts...)
			go func() {
				<-gone
				srv.close()
				os.Exit(0)
			}()
			return s
		},
	})
	srv.close()
}

// maxSendFromEnv is the host's bound of one answer (MaxMessageEnv), 0 when it set none or
// set something that is not a positive number.
func maxSendFromEnv() int {
	n, err := strconv.Atoi(os.Getenv(MaxMessageEnv))
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

// limitUnary tells the provider the host's bound of one answer (plugin.MaxResultBytes),
// so that a provider that can tell a result's size before reading it refuses early.
func (s *server) limitUnary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	return h(plugin.WithMaxResultBytes(ctx, s.maxSend), req)
}

// tooLarge refuses an answer larger than the host reads, before it is written as JSON.
func (s *server) tooLarge(v any) error {
	if s.maxSend > 0 && plugin.JSONSizeAtLeast(v, s.maxSend+1) {
		return status.Errorf(codes.ResourceExhausted, "the result is larger than %d bytes, the most the host reads from this plugin", s.maxSend)
	}
	return nil
}

// hclogKeys writes slog's level and message under the keys go-plugin's host reads
// (@level, @message), and leaves the time out (the host stamps the line).
func hclogKeys(groups []string, a slog.Attr) slog.Attr {
	if len(groups) > 0 {
		return a
	}
	switch a.Key {
	case slog.TimeKey:
		return slog.Attr{}
	case slog.LevelKey:
		lvl, _ := a.Value.Any().(slog.Level)
		name := "info"
		switch {
		case lvl < slog.LevelInfo:
			name = "debug"
		case lvl >= slog.LevelError:
			name = "error"
		case lvl >= slog.LevelWarn:
			name = "warn"
		}
		return slog.String("@level", name)
	case slog.MessageKey:
		return slog.String("@message", a.Value.String())
	}
	return a
}

// hostWatch ends the process's service when the host's last connection closes: a host
// that was killed (no chance to stop its plugins) closes its end of the socket with its
// death, and its plugins follow it instead of running on alone.
type hostWatch struct {
	mu    sync.Mutex
	conns int
	seen  bool
	gone  chan struct{}
	once  sync.Once
}

func (h *hostWatch) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }

func (h *hostWatch) HandleRPC(context.Context, stats.RPCStats) {}

func (h *hostWatch) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return ctx
}

func (h *hostWatch) HandleConn(_ context.Context, s stats.ConnStats) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch s.(type) {
	case *stats.ConnBegin:
		h.conns++
		h.seen = true
	case *stats.ConnEnd:
		h.conns--
		if h.seen && h.conns == 0 {
			h.once.Do(func() { close(h.gone) })
		}
	}
}

// recoverUnary turns a provider's panic into an error, as the gateway does for a
// provider in its own process: a bug costs the call, not the plugin.
func recoverUnary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (resp any, err error) {
	defer func() {
		if r := recover(); r != nil {
			resp, err = nil, status.Error(codes.Internal, fmt.Sprintf("internal error: %v", r))
		}
	}()
	return h(ctx, req)
}

func recoverStream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = status.Error(codes.Internal, fmt.Sprintf("internal error: %v", r))
		}
	}()
	return h(srv, ss)
}

// grpcPlugin is go-plugin's view of the service: the server side registers it, the
// client side wraps the connection.
type grpcPlugin struct {
	goplugin.NetRPCUnsupportedPlugin
	srv *server
}

func (p *grpcPlugin) GRPCServer(_ *goplugin.GRPCBroker, s *grpc.Server) error {
	pluginpb.RegisterProviderServer(s, p.srv)
	return nil
}

func (p *grpcPlugin) GRPCClient(_ context.Context, _ *goplugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return pluginpb.NewProviderClient(c), nil
}
