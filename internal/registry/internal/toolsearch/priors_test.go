package toolsearch

import "testing"

// A question or a request for a number reads, whatever its words; a request led by a verb
// used mostly as a verb, naming no operation, favours the tool that creates.
func TestPriorsIntent(t *testing.T) {
	docs := []Doc{
		{Name: "lib_loans_find", Description: "Find loans.", ReadOnly: true},
		{Name: "lib_loans_create", Description: "Create loans."},
		{Name: "lib_loans_count", Description: "Count loans.", ReadOnly: true},
	}
	ix := New(docs)
	for _, c := range []struct{ query, first string }{
		{"which books are out on loan", "lib_loans_find"},
		{"lend a book, record the loan", "lib_loans_create"},
		{"report a loan", "lib_loans_create"},
		{"number of loans", "lib_loans_count"},
		{"how many loans were booked", "lib_loans_count"},
	} {
		hits := ix.Search(c.query, 3)
		if len(hits) == 0 || docs[hits[0].Doc].Name != c.first {
			t.Errorf("Search(%q) = %v, want %s first", c.query, hits, c.first)
		}
	}
	if !isQuestion("Which pupils?") || isQuestion("book a room") || !asksNumber("the Number of depots") || asksNumber("phone number") {
		t.Error("isQuestion or asksNumber misread a query")
	}
}
