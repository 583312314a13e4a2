package main

import (
	"slices"
	"strings"
	"testing"
)

func TestLoopTokensOneTurnPerTask(t *testing.T) {
	tasks := []taskCost{
		{Query: 5, Call: 10, Result: 20},
		{Query: 7, Call: 11, Result: 30},
	}
	got := loopTokens(100, tasks, false)
	// Turn 1 reads the list and the first request: 100 + 5.
	// Turn 2 reads the list, request 1, call 1, result 1 and request 2: 100 + 5 + 10 + 20 + 7.
	want := loopCost{Turns: 2, Input: 105 + 142, Carried: 10 + 20 + 11 + 30}
	want.Total = want.Input + want.Carried
	if got != want {
		t.Fatalf("loopTokens = %+v, want %+v", got, want)
	}
}

func TestLoopTokensSearchTakesTwoTurns(t *testing.T) {
	tasks := []taskCost{
		{Query: 5, Search: 8, SearchResult: 40, Call: 10, Result: 20},
		{Query: 7, Search: 9, SearchResult: 50, Call: 11, Result: 30},
	}
	got := loopTokens(10, tasks, true)
	turns := []int{
		10 + 5,                                 // search for task 1
		10 + 5 + 8 + 40,                        // call for task 1
		10 + 5 + 8 + 40 + 10 + 20 + 7,          // search for task 2
		10 + 5 + 8 + 40 + 10 + 20 + 7 + 9 + 50, // call for task 2
	}
	input := 0
	for _, n := range turns {
		input += n
	}
	carried := 8 + 40 + 10 + 20 + 9 + 50 + 11 + 30
	want := loopCost{Turns: 4, Input: input, Carried: carried, Total: input + carried}
	if got != want {
		t.Fatalf("loopTokens = %+v, want %+v", got, want)
	}
	// Search fields are ignored when the form does not search.
	if plain := loopTokens(10, tasks, false); plain.Turns != 2 || plain.Carried != 10+20+11+30 {
		t.Fatalf("loopTokens without search = %+v", plain)
	}
}

func TestLoopTokensSmallerListWinsOnlyWhenSearchIsCheap(t *testing.T) {
	// With a large list, search's extra turns cost less than the list they save; with a
	// small one they cost more (the published finding the loop must be able to show).
	tasks := make([]taskCost, 10)
	for i := range tasks {
		tasks[i] = taskCost{Query: 10, Search: 15, SearchResult: 600, Call: 30, Result: 100}
	}
	if big, search := loopTokens(100000, tasks, false), loopTokens(300, tasks, true); search.Total >= big.Total {
		t.Errorf("large catalogue: search %d ≥ full %d", search.Total, big.Total)
	}
	if small, search := loopTokens(1500, tasks, false), loopTokens(300, tasks, true); search.Total <= small.Total {
		t.Errorf("small catalogue: search %d ≤ full %d", search.Total, small.Total)
	}
}

func TestServedForm(t *testing.T) {
	cases := []struct {
		names []string
		want  string
	}{
		{[]string{"a__echo", "b__sum"}, formFull},
		{[]string{"a__echo", describeToolName}, formThin},
		{[]string{searchToolName, "pinned__tool"}, formSearch},
		{nil, formFull},
	}
	for _, c := range cases {
		if got := servedForm(c.names); got != c.want {
			t.Errorf("servedForm(%v) = %s, want %s", c.names, got, c.want)
		}
	}
}

// outcome builds a catalogue outcome with list tokens and loop totals per form.
func outcome(name string, forms map[string][2]int, served map[string]string) *catalogueOutcome {
	c := &catalogueOutcome{Name: name, Forms: map[string]*formOutcome{}}
	for f, v := range forms {
		s := f
		if x, ok := served[f]; ok {
			s = x
		}
		c.Forms[f] = &formOutcome{Asked: f, Served: s, ListTokens: v[0], Loop: loopCost{Total: v[1]}}
	}
	return c
}

func checkByPrefix(t *testing.T, checks []Check, prefix string) Check {
	t.Helper()
	for _, c := range checks {
		if strings.HasPrefix(c.What, prefix) {
			return c
		}
	}
	t.Fatalf("no check %q in %+v", prefix, checks)
	return Check{}
}

func TestTokenTargets(t *testing.T) {
	medium := outcome(catMedium, map[string][2]int{
		formFull: {10000, 100000}, formThin: {1900, 30000}, formSearch: {400, 20000}, formAuto: {1900, 30000},
	}, map[string]string{formAuto: formThin})
	large := outcome(catLarge, map[string][2]int{
		formFull: {100000, 1000000}, formThin: {30000, 300000}, formSearch: {5100, 60000}, formAuto: {5100, 60000},
	}, map[string]string{formAuto: formSearch})
	large.Queries, large.Hits = 60, 54
	large.Forms[formThin].Failed = []string{"boom"}
	checks, _ := tokenTargets([]*catalogueOutcome{medium, large})

	if c := checkByPrefix(t, checks, "thin list tokens vs full"); !c.Pass || c.Got != "19.0%" {
		t.Errorf("thin at 19%% of full: %+v", c)
	}
	if c := checkByPrefix(t, checks, "search list tokens vs full"); c.Pass || c.Got != "5.1%" {
		t.Errorf("search at 5.1%% of full must miss: %+v", c)
	}
	if c := checkByPrefix(t, checks, "search top-3 hit rate, large"); !c.Pass {
		t.Errorf("54 of 60 (90%%) must hold: %+v", c)
	}
	// Medium: auto served thin (30000), the best single form is search (20000): 1.5× misses.
	if c := checkByPrefix(t, checks, "auto's 10-turn total vs the best single form's (search), medium"); c.Pass {
		t.Errorf("auto 1.5× the best must miss: %+v", c)
	}
	if c := checkByPrefix(t, checks, "auto's 10-turn total vs the best single form's (search), large"); !c.Pass {
		t.Errorf("auto equal to the best must hold: %+v", c)
	}
	if c := checkByPrefix(t, checks, "failed loop calls, large"); c.Pass || c.Got != "1" {
		t.Errorf("a failed call must miss: %+v", c)
	}
	if c := checkByPrefix(t, checks, "failed loop calls, medium"); !c.Pass {
		t.Errorf("no failed call must hold: %+v", c)
	}
}

func TestTokenTargetsWithoutSearch(t *testing.T) {
	small := outcome(catSmall, map[string][2]int{
		formFull: {2000, 20000}, formThin: {800, 10500}, formSearch: {2000, 0}, formAuto: {2000, 20000},
	}, map[string]string{formSearch: notOffered, formAuto: formFull})
	small.Queries = 10 // asked of nothing: the form is not offered
	checks, notes := tokenTargets([]*catalogueOutcome{small})
	for _, c := range checks {
		if strings.Contains(c.What, "search") || strings.Contains(c.What, "hit rate") {
			t.Errorf("a search target while search is not offered: %+v", c)
		}
	}
	// The best single form is thin (10500); auto served full (20000).
	if c := checkByPrefix(t, checks, "auto's 10-turn total vs the best single form's (thin), small"); c.Pass {
		t.Errorf("auto at 1.9× thin must miss: %+v", c)
	}
	if !slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, notOffered) }) {
		t.Errorf("notes do not say the search form is not offered: %v", notes)
	}
	if !slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, "medium catalogue did not run") }) {
		t.Errorf("notes do not say the medium catalogue did not run: %v", notes)
	}
}
