package pluginproc

import (
	"runtime"

	"google.golang.org/grpc"
)

// The gRPC options of the two ends of the plugin connection, chosen for latency: one
// tool call is one unary RPC with a small request and answer over a Unix socket, and the
// host waits for it. docs/performance.md (S13) has the measurements behind each one.

// serverOptions are the plugin process's gRPC server options.
//
// Stream workers: without them gRPC starts a goroutine for every RPC, and a provider
// that needs a deep stack (the sql plugin's SQLite driver does) grows that fresh 8 KiB
// stack by copying it several times on every call; a worker keeps its grown stack from
// one call to the next (gRPC replaces it every 65,536 calls, so a stack does not stay
// large for ever). A call that finds every worker busy still gets a goroutine of its own,
// so long-lived streams never hold calls up; but they do keep a worker each for as long
// as they last (the host's Wait, go-plugin's stdio stream, every Subscribe), which is why
// there are streamWorkers more workers than CPUs: with only GOMAXPROCS of them, the first
// two long-lived streams took both and every call went back to a fresh goroutine.
//
// maxSend (when > 0) is the host's bound of one answer: gRPC refuses to send a larger
// message rather than write what the host would refuse.
func serverOptions(maxSend int) []grpc.ServerOption {
	opts := []grpc.ServerOption{grpc.NumStreamWorkers(uint32(runtime.GOMAXPROCS(0) + streamWorkers)),
		grpc.InitialWindowSize(flowWindow), grpc.InitialConnWindowSize(flowWindow)}
	if maxSend > 0 {
		opts = append(opts, grpc.MaxSendMsgSize(maxSend))
	}
	return opts
}

// dialOptions are the host's gRPC client options. maxRecv (when > 0) bounds one answer:
// gRPC reads a message's length from its header and refuses a longer one before reading
// it, so an oversized answer costs the host no more than the flow-control window. It
// comes after go-plugin's own default (2 GiB), which it overrides.
func dialOptions(maxRecv int, bw *BusyWait) []grpc.DialOption {
	opts := []grpc.DialOption{grpc.WithInitialWindowSize(flowWindow), grpc.WithInitialConnWindowSize(flowWindow)}
	if bw != nil {
		opts = append(opts, grpc.WithChainUnaryInterceptor(bw.unary))
	}
	if maxRecv > 0 {
		opts = append(opts, grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxRecv)))
	}
	return opts
}

// flowWindow is the flow-control window of both ends, fixed: setting it turns off gRPC's
// bandwidth-delay estimation, whose pings (and their answers) are frames and socket writes
// besides the call's own.
const flowWindow = 1 << 20

// streamWorkers is how many stream workers the plugin has beyond GOMAXPROCS.
const streamWorkers = 8
