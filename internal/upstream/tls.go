package upstream

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/mcpgw/mcpgw/internal/tlsfiles"
)

// TLSFiles are an upstream's TLS settings as the config names them (servers.<name>.tls,
// docs/config.md), read by internal/tlsfiles.
type TLSFiles = tlsfiles.Files

// tlsProfile is one set of TLS settings, loaded: the configuration the POST client
// (h1) uses and the net/http client (GET streams, DELETE, legacy SSE) made with it.
type tlsProfile struct {
	id   string // the digest of the settings and files, telling pooled connections apart
	conf *tls.Config
	http *http.Client
}

// tlsProfiles caches the profiles by digest, so that upstreams with the same settings
// share their net/http client's connections, and a reconnect after the files changed
// gets the new ones. Each Dialer has its own.
type tlsProfiles struct {
	mu sync.Mutex
	m  map[string]*tlsProfile
}

// profileFor loads f (the zero value: the system's roots and the Dialer's HTTPClient).
func (d *Dialer) profileFor(f TLSFiles) (*tlsProfile, error) {
	if f.IsZero() {
		return &tlsProfile{http: d.http}, nil
	}
	conf, id, err := f.LoadDigest()
	if err != nil {
		return nil, err
	}
	d.tls.mu.Lock()
	defer d.tls.mu.Unlock()
	p := d.tls.m[id]
	if p == nil {
		p = &tlsProfile{id: id, conf: conf, http: newUpstreamHTTPClient(conf)}
		d.tls.m[id] = p
	}
	return p, nil
}

// newUpstreamHTTPClient is a net/http client for upstreams: many idle connections per
// host, the environment's proxy, and conf (nil: the defaults) for https.
func newUpstreamHTTPClient(conf *tls.Config) *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		TLSClientConfig:     conf,
		MaxIdleConns:        1024,
		MaxIdleConnsPerHost: 512,
		IdleConnTimeout:     90 * time.Second,
		ForceAttemptHTTP2:   false,
	}}
}

// useTLS gives an HTTP transport the clients of its TLS settings.
func (d *Dialer) useTLS(tr transport, f TLSFiles) error {
	if f.IsZero() {
		return nil
	}
	p, err := d.profileFor(f)
	if err != nil {
		return fmt.Errorf("tls: %w", err)
	}
	switch t := tr.(type) {
	case *streamTransport:
		t.client = p.http
		t.h1.TLS, t.h1.TLSID = p.conf, p.id
	case *sseTransport:
		t.client = p.http
	}
	return nil
}
