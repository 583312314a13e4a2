package gateway

// The replay buffer's limits, driven directly: filling a stream past
// http.resume_buffer_bytes through the everything-server would need a tool with large
// output, which it does not have.

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/telemetry"
	"github.com/mcpgw/mcpgw/internal/store"
	"github.com/mcpgw/mcpgw/internal/wire"
)

func resumeTestGateway(bufBytes int, total int64, keep time.Duration) (*Gateway, *session.Session) {
	cfg := &config.Config{}
	cfg.HTTP.ResumeBufferBytes, cfg.HTTP.ResumeMaxBytes, cfg.HTTP.ResumeFor = bufBytes, total, keep
	g := &Gateway{cfg: cfg, metrics: telemetry.NewMetrics("all")}
	linkParts(g)
	return g, session.New(sessionHost{g}, store.Record{ID: "test"})
}

// counterValue reads a counter of m, as a scrape would: name, and its labels' values as
// name, value pairs (a counter without labels has none); 0 when it has no such series.
func counterValue(m *telemetry.Metrics, name string, labels ...string) float64 {
	fams, _ := m.Gather()
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	series:
		for _, s := range f.GetMetric() {
			for i := 0; i+1 < len(labels); i += 2 {
				found := false
				for _, l := range s.GetLabel() {
					found = found || (l.GetName() == labels[i] && l.GetValue() == labels[i+1])
				}
				if !found {
					continue series
				}
			}
			return s.GetCounter().GetValue()
		}
	}
	return 0
}

func eventOf(t *testing.T, stream string, seq int, size int) []byte {
	t.Helper()
	data := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":` + strconv.Itoa(seq) + `,"pad":"` + strings.Repeat("x", size) + `"}}`
	return wire.AppendEvent(nil, stream+"-"+strconv.Itoa(seq), "message", []byte(data))
}

func resumeOnce(g *Gateway, s *session.Session, last string) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodGet, "/mcp", nil)
	g.streamable.serveResume(w, r, s, last)
	return w
}

func replayedIDs(t *testing.T, body []byte) (ids []string, warnings int) {
	t.Helper()
	sr := wire.NewSSEReader(bytes.NewReader(body), 1<<20)
	for {
		ev, err := sr.Next()
		if err == io.EOF || err != nil {
			return ids, warnings
		}
		if bytes.Contains(ev.Data, []byte(`"notifications/message"`)) {
			warnings++
			continue
		}
		ids = append(ids, ev.ID)
	}
}

// TestResumeBufferDropsOldest: past http.resume_buffer_bytes the oldest events go; a
// resume from before them gets a warning and then what was kept, the response included;
// a resume from after them gets no warning.
func TestResumeBufferDropsOldest(t *testing.T) {
	g, s := resumeTestGateway(4096, 1<<20, time.Minute)
	b := s.Resumes.New(g.streamable.resumes, "s1")
	for seq := 1; seq <= 10; seq++ { // ten ~1 KiB events: 4 fit
		b.Add(seq, eventOf(t, "s1", seq, 1000), false)
	}
	b.Add(11, eventOf(t, "s1", 11, 10), true)
	b.Finish()
	if n := g.streamable.resumes.Bytes(); n > 4096 {
		t.Fatalf("buffers hold %d bytes, limit 4096", n)
	}
	if got := counterValue(g.metrics, "mcpgw_resume_buffers_dropped_total", "reason", "size"); got != 1 {
		t.Errorf("size drops counted %v, want 1 (once per stream)", got)
	}
	w := resumeOnce(g, s, "s1-2")
	if w.Code != http.StatusOK {
		t.Fatalf("resume from a dropped event: HTTP %d %s", w.Code, w.Body)
	}
	ids, warn := replayedIDs(t, w.Body.Bytes())
	first := len(ids)
	if warn != 1 || len(ids) == 0 || len(ids) >= 9 || ids[len(ids)-1] != "s1-11" {
		t.Errorf("replay after s1-2: warnings %d, ids %v; want one warning, then the kept events ending with s1-11", warn, ids)
	}
	w = resumeOnce(g, s, "s1-9")
	ids, warn = replayedIDs(t, w.Body.Bytes())
	if warn != 0 || strings.Join(ids, ",") != "s1-10,s1-11" {
		t.Errorf("replay after s1-9: warnings %d, ids %v; want s1-10,s1-11 and no warning", warn, ids)
	}
	if got := counterValue(g.metrics, "mcpgw_resume_events_replayed_total"); got != float64(first+len(ids)) {
		t.Errorf("replayed events counted %v, want %d", got, first+len(ids))
	}
}
