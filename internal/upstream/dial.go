package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sort"
	"time"

	"github.com/mcpgw/mcpgw/internal/httpclient"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// Options says how to reach one upstream instance.
type Options struct {
	Name      string
	Transport string // stdio | streamable_http | sse | inprocess
	Command   string
	Args      []string
	Env       map[string]string
	Dir       string
	URL       string
	Headers   map[string]string
	// ProtocolVersion offered in initialize (default SessionVersion); StatelessVersion asks
	// for the stateless revision, AutoVersion for it first and the session revision when
	// the server does not serve it.
	ProtocolVersion string
	// ClientCaps is the capabilities object sent in initialize (raw JSON). Nil means the
	// gateway's own: roots, sampling and elicitation, which it relays to its clients.
	ClientCaps json.RawMessage
	// ClientInfo is the clientInfo sent in initialize (raw JSON); nil means mcpgw's.
	ClientInfo     json.RawMessage
	ConnectTimeout time.Duration
	// MaxMessageBytes bounds one message from the upstream (0: MaxMessageBytes). A stdio
	// upstream that sends a larger one is restarted; its calls fail saying why.
	MaxMessageBytes int
	// TLS are an http upstream's TLS settings (servers.<name>.tls): CA bundle, client
	// certificate, server name. The zero value is the system's roots and no certificate.
	TLS TLSFiles
	// MaxConcurrency bounds the requests the gateway's clients have in flight on the
	// instance at once (0: no limit); MaxQueue and QueueTimeout bound those waiting for a
	// slot (see Limiter). The gateway's own requests (initialize, listing, ping) are not
	// counted.
	MaxConcurrency int
	MaxQueue       int
	QueueTimeout   time.Duration
	// MaxQueuePerOwner bounds the requests of one owner waiting (Limiter.MaxWaitPerOwner;
	// 0: no bound but MaxQueue).
	MaxQueuePerOwner int
	Handler          Handler
	Log              *slog.Logger
	// InProcess is the server of transport inprocess, served by this process (inproc.go).
	InProcess *InProcess
	// Authorizer gives a streamable HTTP upstream's requests their Authorization header,
	// for an upstream mcpgw is the OAuth client of (nil: none).
	Authorizer Authorizer
	// Runner names the executor whose runner starts this stdio server, instead of the
	// gateway's host (Dialer.Runners; "": the gateway's host).
	Runner string
}

// defaultClientCaps are the capabilities the gateway offers upstreams it shares between
// sessions: everything it can relay to a client.
const defaultClientCaps = `{"elicitation":{"form":{},"url":{}},"extensions":{"` + UIExtension + `":{"mimeTypes":["` + UIMimeType + `"]}},"roots":{"listChanged":true},"sampling":{}}`

// DefaultClientCaps are the capabilities the gateway offers upstreams it shares between
// sessions (Options.ClientCaps nil): everything it can relay to a client. Each call
// returns a copy of its own.
func DefaultClientCaps() json.RawMessage { return json.RawMessage(defaultClientCaps) }

// DefaultDiscoverProbe is Dialer.DiscoverProbe's default: long enough for a server that
// is slow to start (one fetched by npx on first use) to answer before the fallback, which
// still works when it is not.
const DefaultDiscoverProbe = 10 * time.Second

// DefaultVersion is the version a Dialer without one sends (clientInfo.version and the
// User-Agent).
const DefaultVersion = "dev"

// Dialer is what the upstream connections of one gateway share: how stdio upstreams
// are started (GuardianPath), the version the gateway gives itself, the pool of the POST
// client's keep-alive connections, the net/http clients of GET streams, DELETE and legacy
// SSE (one per set of TLS settings), and busy polling. Nothing of it is shared between
// Dialers, so two gateways in one process keep their settings and connections apart.
// Set the exported fields before the first Dial.
type Dialer struct {
	// GuardianPath is the binary that understands ChildArg ("": stdio upstreams are
	// spawned directly). The mcpgw daemon sets it to itself. The guardian keeps an
	// upstream's whole process group from outliving the gateway, even when the gateway is
	// killed with SIGKILL.
	GuardianPath string
	// Version is the gateway's version, sent as clientInfo.version and in the POSTs'
	// User-Agent ("": DefaultVersion).
	Version string
	// Busy is the gateway's busy polling for upstream answers (nil: never).
	Busy *BusyPoll
	// DiscoverProbe bounds how long a stdio or legacy SSE upstream dialed with
	// protocol_version auto may take to answer server/discover before the connection
	// falls back to initialize on the session revision (0: DefaultDiscoverProbe). A
	// session-era server must answer an unknown method with an error, but one that says
	// nothing would otherwise hold the instance's start for the whole connect timeout and
	// fail it. An HTTP upstream always answers at the HTTP level and is not bounded here.
	DiscoverProbe time.Duration

	// Runners reaches the executors' runners, which start the stdio servers of options
	// with a Runner (nil: none; such a dial fails saying so).
	Runners RunnerDialer

	bindings serverBindings // the x-mcp-header bindings of each server's tools (paramheaders.go)

	pool *httpclient.Pool // idle keep-alive connections of the POST client (internal/httpclient)
	http *http.Client     // the net/http client of upstreams without TLS settings
	tls  tlsProfiles      // the clients of upstreams with TLS settings, by digest (tls.go)
}

// NewDialer is a Dialer with pools of its own, no guardian and busy polling off.
func NewDialer() *Dialer {
	return &Dialer{pool: &httpclient.Pool{}, http: newUpstreamHTTPClient(nil), tls: tlsProfiles{m: map[string]*tlsProfile{}}}
}

// HTTPClient is the net/http client of the Dialer's upstreams without TLS settings of
// their own (GET streams, DELETE, legacy SSE): many idle connections per host, since
// every session's traffic to a shared upstream goes through it, and the proxy of
// HTTPS_PROXY, HTTP_PROXY and NO_PROXY. An upstream with a `tls:` setting gets a client
// of its own (tls.go).
func (d *Dialer) HTTPClient() *http.Client { return d.http }

// EffectiveVersion is Version, or DefaultVersion when it is empty.
func (d *Dialer) EffectiveVersion() string { return versionOr(d.Version) }

// waiter is the Dialer's busy polling as the HTTP client takes it (nil: none).
func (d *Dialer) waiter() httpclient.Waiter {
	if d.Busy == nil {
		return nil
	}
	return busyWaiter{d.Busy}
}

// versionOr is v, or DefaultVersion when v is empty.
func versionOr(v string) string {
	if v == "" {
		return DefaultVersion
	}
	return v
}

// Dial starts the transport, performs the initialize handshake and returns a ready Conn.
func (d *Dialer) Dial(ctx context.Context, o Options) (*Conn, error) {
	log := o.Log
	if log == nil {
		log = slog.Default()
	}
	tr, err := d.transport(ctx, o, log)
	if err != nil {
		return nil, err
	}
	c := newConn(o.Name, tr, o.Handler, log)
	c.busy = d.Busy
	c.version = d.EffectiveVersion()
	c.probe = d.DiscoverProbe
	if c.probe <= 0 {
		c.probe = DefaultDiscoverProbe
	}
	c.paramHeaders = d.bindings.of(o.Name)
	c.Limit = NewLimiter(o.MaxConcurrency, o.MaxQueue, o.QueueTimeout)
	if c.Limit != nil {
		c.Limit.MaxWaitPerOwner = o.MaxQueuePerOwner
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, o.ConnectTimeout)
	defer cancel()
	if err := c.start(); err != nil {
		_ = tr.close()
		if st, ok := tr.(*stdioTransport); ok {
			return nil, st.startError(err, o.Env, false)
		}
		return nil, err
	}
	if err := c.initialize(ctx, o); err != nil {
		var auth *AuthError
		if c.probed && o.ProtocolVersion == AutoVersion && ctx.Err() == nil && !errors.As(err, &auth) && c.ended() {
			// The server went away over server/discover (a strict one exits on a method
			// it does not know before initialize): a fresh one gets initialize alone.
			_ = c.Close()
			log.Info("upstream exited on server/discover: starting it again on the session revision", "server", o.Name)
			o.ProtocolVersion = SessionVersion
			return d.Dial(ctx, o)
		}
		return nil, c.initFailed(ctx, err, o)
	}
	return c, nil
}

// ended reports whether the connection's transport has ended.
func (c *Conn) ended() bool {
	select {
	case <-c.Done():
		return true
	case <-time.After(time.Second):
		// A write that met a closed pipe comes before the process's exit is seen.
		return false
	}
}

// transport makes o's transport, with the Dialer's clients and guardian.
func (d *Dialer) transport(ctx context.Context, o Options, log *slog.Logger) (transport, error) {
	var tr transport
	switch o.Transport {
	case "stdio":
		if o.Runner != "" {
			tr = newRunnerTransport(d.Runners, o, log)
			break
		}
		tr = newStdio(stdioSpec{name: o.Name, command: o.Command, args: o.Args, env: mergeEnv(o.Env), dir: o.Dir,
			maxMessage: o.MaxMessageBytes, guardian: d.GuardianPath}, log)
	case "streamable_http":
		st := newStreamable(o.Name, o.URL, o.Headers, d.http, log)
		st.h1.Pool, st.h1.Busy, st.h1.UserAgent = d.pool, d.waiter(), "mcpgw/"+d.EffectiveVersion()
		st.maxMessage = o.MaxMessageBytes
		st.auth = o.Authorizer
		tr = st
	case "sse":
		st := newSSE(o.Name, o.URL, o.Headers, d.http, log)
		st.maxMessage = o.MaxMessageBytes
		tr = st
	case "inprocess":
		var err error
		if tr, err = newInProcess(o, log); err != nil {
			return nil, err
		}
		if ip, ok := tr.(*inprocTransport); ok {
			ip.h1.Busy, ip.h1.UserAgent = d.waiter(), "mcpgw/"+d.EffectiveVersion()
		}
	default:
		return nil, fmt.Errorf("unknown transport %q", o.Transport)
	}
	if err := d.useTLS(tr, o.TLS); err != nil {
		_ = tr.close()
		return nil, err
	}
	return tr, nil
}

// initFailed closes a connection whose initialize failed and says why: a timeout, or for a
// stdio upstream its exit and last stderr lines.
func (c *Conn) initFailed(ctx context.Context, err error, o Options) error {
	st, isStdio := c.tr.(*stdioTransport)
	exited := false
	if isStdio && ctx.Err() == nil {
		// Not a timeout: the process is going away (a write met a closed pipe, or
		// its output ended). Its exit code says why, once it has one.
		select {
		case <-st.doneCh:
			exited = true
		case <-time.After(time.Second):
		}
	}
	_ = c.Close()
	if ctx.Err() != nil {
		err = fmt.Errorf("initialize: no answer within %s", o.ConnectTimeout)
	} else {
		err = fmt.Errorf("initialize: %w", err)
	}
	if isStdio {
		return st.startError(err, o.Env, exited)
	}
	return err
}

// probeContext is ctx bounded by the discover probe for a stdio or legacy SSE upstream
// (Dialer.DiscoverProbe), and its cancel.
func (c *Conn) probeContext(ctx context.Context) (context.Context, context.CancelFunc) {
	switch c.tr.(type) {
	case *stdioTransport, *sseTransport:
		return context.WithTimeout(ctx, c.probe)
	}
	return ctx, func() {}
}

func (c *Conn) initialize(ctx context.Context, o Options) error {
	pv := o.ProtocolVersion
	if pv == "" {
		pv = SessionVersion
	}
	caps := o.ClientCaps
	if caps == nil {
		caps = DefaultClientCaps()
	}
	info := o.ClientInfo
	if info == nil {
		info, _ = json.Marshal(map[string]string{"name": "mcpgw", "version": c.version})
	}
	if pv == StatelessVersion {
		return c.discover(ctx, caps, info)
	}
	if pv == AutoVersion {
		// The stateless revision first, as a go-sdk client connects: a server that lists
		// it in server/discover is driven on it (its input requests keep their own keys,
		// the callers' capabilities go with each request); any other answer, a session
		// server's included, falls back to initialize on the session revision.
		pctx, cancel := c.probeContext(ctx)
		err := c.discover(pctx, caps, info)
		cancel()
		c.probed = err != nil
		var auth *AuthError
		if err == nil || ctx.Err() != nil || errors.As(err, &auth) {
			return err
		}
		c.log.Debug("the stateless revision is not served: initialize", "server", c.Name, "err", err)
		c.notStateless()
		pv = SessionVersion
	}
	params, _ := json.Marshal(map[string]any{
		"protocolVersion": pv,
		"capabilities":    caps,
		"clientInfo":      info,
	})
	res, err := c.Request(ctx, "initialize", params)
	if err != nil {
		if refusesInitialize(err) {
			// A server of the stateless revision only (stateless.go).
			return c.discover(ctx, caps, info)
		}
		return err
	}
	var ir struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
		Instructions    string          `json:"instructions"`
	}
	if err := json.Unmarshal(res, &ir); err != nil {
		return fmt.Errorf("bad initialize result: %w", err)
	}
	if ir.ProtocolVersion == "" {
		return fmt.Errorf("initialize result has no protocolVersion")
	}
	c.InitResult = res
	c.ProtocolVersion = ir.ProtocolVersion
	c.Instructions = ir.Instructions
	if len(ir.Capabilities) > 0 {
		_ = json.Unmarshal(ir.Capabilities, &c.ServerCaps)
	}
	c.tr.afterInit(ir.ProtocolVersion)
	return c.Notify(ctx, "notifications/initialized", nil)
}

// ListAll pages through a list method and returns the raw items under key. Of a
// tools/list it keeps only the tools whose x-mcp-header annotations are valid, and learns
// their bindings (paramheaders.go).
func (c *Conn) ListAll(ctx context.Context, method, key string) ([]json.RawMessage, error) {
	var out []json.RawMessage
	cursor := ""
	for page := 0; page < 1000; page++ {
		var params json.RawMessage
		if cursor != "" {
			params, _ = json.Marshal(map[string]string{"cursor": cursor})
		}
		res, err := c.Request(ctx, method, params)
		if err != nil {
			return nil, err
		}
		var list, next []byte
		if err := wire.Members(res, func(k string, v []byte) error {
			switch k {
			case key:
				list = v
			case "nextCursor":
				next = v
			}
			return nil
		}); err != nil {
			return nil, fmt.Errorf("bad %s result: %w", method, err)
		}
		if len(list) > 0 && string(list) != "null" {
			if err := wire.Elements(list, func(v []byte) error {
				out = append(out, v)
				return nil
			}); err != nil {
				return nil, fmt.Errorf("bad %s result: %w", method, err)
			}
		}
		cursor = ""
		if len(next) > 0 {
			cursor, _ = wire.String(next)
		}
		if cursor == "" {
			if method == "tools/list" {
				out = c.keepValidTools(out)
			}
			return out, nil
		}
	}
	return out, fmt.Errorf("%s: more than 1000 pages", method)
}

// Pid returns the upstream's process id for stdio transports (0 otherwise).
func (c *Conn) Pid() int {
	if s, ok := c.tr.(*stdioTransport); ok {
		return s.Pid()
	}
	return 0
}

// mergeEnv is the gateway's environment with the server's env on top, in a stable order.
func mergeEnv(extra map[string]string) []string {
	env := os.Environ()
	if len(extra) == 0 {
		return env
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+extra[k])
	}
	return env
}
