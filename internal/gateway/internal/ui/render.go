package ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf16"
)

// uiPage is the shared frame of every page.
type uiPage struct {
	Title, Page string
	CSRF        string
	Actor       string
	CanSignOut  bool
	Version     string
	// Waiting is how many definitions wait for an admin's decision (the Integrity link's
	// count; 0 before sign-in).
	Waiting int
	Data    any
}

// renderer answers the UI's pages: the layout around a page's template, with the
// request's sign-in (its CSRF token and actor) and the Integrity link's count. It parses
// the templates once, at the first page.
type renderer struct {
	port    Port // IntegrityWaiting, for the Integrity link
	version string
	log     *slog.Logger

	templatesOnce sync.Once
	templates     map[string]*template.Template
	templatesErr  error
}

// template parses the layout with one page's template (once for all pages).
func (v *renderer) template(page string) (*template.Template, error) {
	v.templatesOnce.Do(func() {
		v.templates = map[string]*template.Template{}
		pages, err := fs.Glob(uiFiles, "templates/*.html")
		if err != nil {
			v.templatesErr = err
			return
		}
		for _, p := range pages {
			name := strings.TrimSuffix(path.Base(p), ".html")
			if name == "layout" {
				continue
			}
			t, err := template.New("layout.html").Funcs(uiFuncs).ParseFS(uiFiles, "templates/layout.html", p)
			if err != nil {
				v.templatesErr = err
				return
			}
			v.templates[name] = t
		}
	})
	if v.templatesErr != nil {
		return nil, v.templatesErr
	}
	t := v.templates[page]
	if t == nil {
		return nil, &fs.PathError{Op: "template", Path: page, Err: fs.ErrNotExist}
	}
	return t, nil
}

// render answers page under title with data, for the sign-in s (nil: none).
func (v *renderer) render(w http.ResponseWriter, r *http.Request, status int, page, title string, s *uiSession, data any) {
	t, err := v.template(page)
	if err != nil {
		v.log.Error("web UI template", "page", page, "err", err)
		http.Error(w, "web UI template error", http.StatusInternalServerError)
		return
	}
	p := uiPage{Title: title, Page: page, Version: v.version, Data: data}
	if s != nil {
		p.CSRF, p.Actor = s.csrf, s.actor
		p.CanSignOut = s.actor != ""
		if s.actor != "" {
			p.Waiting = v.port.IntegrityWaiting()
		}
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, p); err != nil {
		v.log.Error("web UI page", "page", page, "err", err)
		http.Error(w, "web UI page error", http.StatusInternalServerError)
		return
	}
	uiHeaders(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// Render answers a page: the layout around the template named page, with data and the
// request's signed-in session (its CSRF token and actor).
func (v *renderer) Render(w http.ResponseWriter, r *http.Request, status int, page, title string, data any) {
	v.render(w, r, status, page, title, uiSessionFrom(r), data)
}

// Message answers a page that only says msg under title.
func (v *renderer) Message(w http.ResponseWriter, r *http.Request, status int, title, msg string) {
	v.render(w, r, status, "message", title, uiSessionFrom(r), map[string]any{"Message": msg})
}

// StoreTrouble answers a page that could not read the session store: 503, saying why.
func (v *renderer) StoreTrouble(w http.ResponseWriter, r *http.Request, err error) {
	v.Message(w, r, http.StatusServiceUnavailable, "Store unavailable", "The session store cannot be read: "+err.Error())
}

var uiFuncs = template.FuncMap{
	"json": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return escapeHidden(string(b)), err
	},
	"ago": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		d := time.Since(t).Round(time.Second)
		switch {
		case d < time.Second:
			return "now"
		case d < time.Hour:
			return d.String() + " ago"
		}
		return t.UTC().Format("2006-01-02 15:04 UTC")
	},
	"join":   strings.Join,
	"reveal": reveal,
	"deref":  func(b *bool) bool { return b != nil && *b },
	"has": func(list []string, s string) bool {
		for _, x := range list {
			if x == s {
				return true
			}
		}
		return false
	},
	"ms": func(sec float64) string {
		if sec != sec { // NaN
			return "—"
		}
		switch {
		case sec < 0.001:
			return ftoa(sec*1e6, 0) + " µs"
		case sec < 1:
			return ftoa(sec*1e3, 1) + " ms"
		}
		return ftoa(sec, 2) + " s"
	},
	"num": func(f float64) string { return ftoa(f, 0) },
	"short": func(s string) string {
		if len(s) > 12 {
			return s[:12] + "…"
		}
		return s
	},
}

func ftoa(f float64, prec int) string { return strconv.FormatFloat(f, 'f', prec, 64) }

// escapeHidden writes the characters reveal marks as JSON \u escapes: JSON text in a page
// (a data- attribute the page's script reads) then holds none raw, and means the same.
// Such characters appear only inside JSON strings, where the escape is valid.
func escapeHidden(s string) string {
	if strings.IndexFunc(s, hiddenRune) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case !hiddenRune(r):
			b.WriteRune(r)
		case r > 0xFFFF:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, "\\u%04X\\u%04X", r1, r2)
		default:
			fmt.Fprintf(&b, "\\u%04X", r)
		}
	}
	return b.String()
}
