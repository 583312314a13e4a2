package oauth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestFetchBodyCap(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"issuer":"` + strings.Repeat("a", 2000) + `"}`))
	}))
	defer srv.Close()
	c := testClient()
	c.MaxBody = 1000
	if _, err := c.DiscoverServer(ctxT(t), srv.URL); !errors.Is(err, ErrBodyTooLarge) {
		t.Errorf("err %v, want ErrBodyTooLarge", err)
	}
	c.MaxBody = 0 // the default, 1 MiB, reads it (and finds the issuer wrong)
	var me *MismatchError
	if _, err := c.DiscoverServer(ctxT(t), srv.URL); !errors.As(err, &me) {
		t.Errorf("err %v, want the document read", err)
	}
}

func TestFetchRedirects(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the other host was reached: %s", r.URL)
	}))
	defer other.Close()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	mux.HandleFunc("/doc", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{}`)) })
	mux.HandleFunc("/same", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, srv.URL+"/doc", http.StatusFound)
	})
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/x", http.StatusFound)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop", http.StatusFound)
	})
	c := testClient()
	if _, err := c.get(ctxT(t), srv.URL+"/same"); err != nil {
		t.Errorf("same-host redirect: %v", err)
	}
	if _, err := c.get(ctxT(t), srv.URL+"/away"); err == nil || !strings.Contains(err.Error(), "another host") {
		t.Errorf("cross-host redirect: err %v", err)
	}
	if _, err := c.get(ctxT(t), srv.URL+"/loop"); err == nil || !strings.Contains(err.Error(), "redirects") {
		t.Errorf("redirect loop: err %v", err)
	}
	c.MaxRedirects = -1
	if _, err := c.get(ctxT(t), srv.URL+"/same"); err == nil {
		t.Error("a redirect followed with MaxRedirects < 0")
	}
}

func TestPostNeverFollowsRedirect(t *testing.T) {
	reached := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/elsewhere" {
			reached = true
		}
		http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	_, err := testClient().post(ctxT(t), srv.URL+"/token", "application/x-www-form-urlencoded", "code=c", nil)
	if err == nil || reached {
		t.Errorf("err %v, reached %v: a POST followed a redirect", err, reached)
	}
}

func TestFetchSlowServerHonoursContext(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := testClient().DiscoverServer(ctx, srv.URL)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err %v, want the deadline", err)
	}
	if time.Since(start) > 3*time.Second {
		t.Errorf("took %v", time.Since(start))
	}
}

func TestCheckURL(t *testing.T) {
	c := &Client{}
	for _, ok := range []string{"https://h/x", "http://localhost:1/x", "http://127.0.0.1/x", "http://[::1]:8/x"} {
		if _, err := c.checkURL("u", ok); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"http://example.com/x", "/relative", "https://h/x#frag", "https://u:p@h/x", "javascript:alert(1)", "https://"} {
		if _, err := c.checkURL("u", bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	c.AllowHTTP = true
	if _, err := c.checkURL("u", "http://example.com/x"); err != nil {
		t.Errorf("AllowHTTP: %v", err)
	}
}
