package toolsearch

import (
	"slices"
	"testing"
)

// A query word no tool has matches the derived forms of it that tools have (prescribed /
// prescriptions, inspected / inspection), and not words that only start alike.
func TestKin(t *testing.T) {
	docs := []Doc{
		{Name: "vet__prescriptions_find", Description: "Find prescriptions."},
		{Name: "site__inspection_list", Description: "List inspections."},
		{Name: "water__reservoir_levels", Description: "Reservoir levels."},
		{Name: "shop__orders_find", Description: "Find orders."},
	}
	ix := New(docs)
	for _, c := range []struct {
		query string
		want  string // the best hit's name; "" when nothing may match
	}{
		{"what was prescribed", "vet__prescriptions_find"},
		{"was the boiler inspected", "site__inspection_list"},
		{"reservations for friday", ""},
		{"prescript", "vet__prescriptions_find"},
		{"presc", "vet__prescriptions_find"}, // a word cut short names what it starts
		{"pres", ""},
	} {
		hits := ix.Search(c.query, 3)
		switch {
		case c.want == "" && len(hits) > 0:
			t.Errorf("%q: got %s, want no match", c.query, docs[hits[0].Doc].Name)
		case c.want != "" && (len(hits) == 0 || docs[hits[0].Doc].Name != c.want):
			t.Errorf("%q: got %v, want %s first", c.query, hits, c.want)
		}
	}
	if got := ix.kin("prescrib"); !slices.Equal(got, []string{"prescription"}) {
		t.Errorf("kin(prescrib) = %v", got)
	}
}
