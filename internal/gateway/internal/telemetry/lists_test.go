package telemetry

import "testing"

// TestListServed: bytes and tokens are counted by agent and form; a thin page
// saves its full form's tokens less its own, nothing without a full form or when it is
// the larger; with agent_label top:1 the second agent is counted as "other".
func TestListServed(t *testing.T) {
	m := NewMetrics("top:1")
	m.ListPageServed("a", "full", ListCount{Bytes: 400, Tokens: 100}, ListCount{})
	m.ListPageServed("a", "thin", ListCount{Bytes: 100, Tokens: 25}, ListCount{Bytes: 400, Tokens: 100}) // saves 100 - 25 = 75
	m.ListPageServed("a", "thin", ListCount{Bytes: 100, Tokens: 25}, ListCount{})                        // no full form: nothing saved
	m.ListPageServed("a", "thin", ListCount{Bytes: 100, Tokens: 25}, ListCount{Bytes: 40, Tokens: 10})   // larger than its full form: nothing saved
	m.ListPageServed("b", "thin", ListCount{Bytes: 40, Tokens: 10}, ListCount{Bytes: 400, Tokens: 100})  // "other": saves 100 - 10 = 90
	value := func(name string, labels ...string) float64 {
		fams, err := m.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fams {
			if f.GetName() != name {
				continue
			}
		series:
			for _, s := range f.GetMetric() {
				for i := 0; i+1 < len(labels); i += 2 {
					ok := false
					for _, l := range s.GetLabel() {
						ok = ok || (l.GetName() == labels[i] && l.GetValue() == labels[i+1])
					}
					if !ok {
						continue series
					}
				}
				return s.GetCounter().GetValue()
			}
		}
		return -1
	}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"mcpgw_tools_list_bytes_total", []string{"agent", "a", "form", "full"}, 400},
		{"mcpgw_tools_list_bytes_total", []string{"agent", "a", "form", "thin"}, 300},
		{"mcpgw_tools_list_estimated_tokens_total", []string{"agent", "a", "form", "thin"}, 75},
		{"mcpgw_tools_list_tokens_saved_total", []string{"agent", "a"}, 75},
		{"mcpgw_tools_list_tokens_saved_total", []string{"agent", "other"}, 90},
		{"mcpgw_tools_list_bytes_total", []string{"agent", "b"}, -1},
	} {
		if got := value(c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
}

// TestListPageServed: the tokens counted are the page's own count, not its bytes/4; a thin
// page saves its full form's tokens less its own, nothing without a full form.
func TestListPageServed(t *testing.T) {
	m := NewMetrics("all")
	m.ListPageServed("a", "full", ListCount{Bytes: 400, Tokens: 70}, ListCount{})
	m.ListPageServed("a", "thin", ListCount{Bytes: 100, Tokens: 30}, ListCount{Bytes: 400, Tokens: 70})   // saves 40
	m.ListPageServed("a", "thin", ListCount{Bytes: 100, Tokens: 30}, ListCount{})                         // no full form
	m.ListPageServed("a", "search", ListCount{Bytes: 50, Tokens: 12}, ListCount{Bytes: 900, Tokens: 200}) // saves 188
	want := map[string]float64{
		`mcpgw_tools_list_estimated_tokens_total{agent="a",form="search"}`: 12,
		`mcpgw_tools_list_bytes_total{agent="a",form="full"}`:              400,
		`mcpgw_tools_list_estimated_tokens_total{agent="a",form="full"}`:   70,
		`mcpgw_tools_list_estimated_tokens_total{agent="a",form="thin"}`:   60,
		`mcpgw_tools_list_tokens_saved_total{agent="a"}`:                   40 + 188,
	}
	fams, err := m.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range fams {
		for _, s := range f.GetMetric() {
			labels := ""
			for _, l := range s.GetLabel() {
				if labels != "" {
					labels += ","
				}
				labels += l.GetName() + `="` + l.GetValue() + `"`
			}
			got[f.GetName()+"{"+labels+"}"] = s.GetCounter().GetValue()
		}
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
}
