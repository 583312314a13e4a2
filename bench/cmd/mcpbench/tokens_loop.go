package main

// T1's accounting, pure: the scripted agent loop's bill from token counts, the form a list
// shows, and the scenario's targets from what was measured. docs/performance.md ("Tokens")
// defines the loop; tokens_test.go holds these functions to it.

import (
	"fmt"
	"slices"
	"strconv"
)

// Form names: what a session asks for with X-Mcp-Handshake, and what a list shows.
const (
	formFull   = "full"
	formThin   = "thin"
	formSearch = "search"
	formAuto   = "auto"
)

// tokenForms are the forms T1 asks for, one session each, in this order.
func tokenForms() []string { return []string{formFull, formThin, formSearch, formAuto} }

// Catalogue names.
const (
	catSmall  = "small"
	catMedium = "medium"
	catLarge  = "large"
	// Catalogues in domains the ranker was not tuned on, each with its own query set.
	catServices = "services"
	catTrades   = "trades"
)

// Targets of issue 26.
const (
	thinShareMax   = 0.20 // thin list ≤ 20% of full's tokens, medium catalogue
	searchShareMax = 0.05 // search list ≤ 5% of full's tokens, large catalogue
	hitRateMin     = 0.90 // share of queries whose tool ranks in the top 3
	autoOverMax    = 1.10 // auto's loop total ≤ 1.10 × the best single form's
)

// servedForm is the form a tools/list shows: the search tool → search, the describe tool →
// thin, neither → full. An auto session is reported by the form it got.
func servedForm(names []string) string {
	switch {
	case slices.Contains(names, searchToolName):
		return formSearch
	case slices.Contains(names, describeToolName):
		return formThin
	}
	return formFull
}

// taskCost is the tokens of one task of the scripted loop, each part counted once.
type taskCost struct {
	Query        int // the user's request in plain words
	Search       int // the call of the search tool (search form only)
	SearchResult int // its result
	Call         int // the call of the intended tool: {"name": …, "arguments": …}
	Result       int // its result
}

// loopCost is the scripted loop's bill in tokens.
type loopCost struct {
	Turns int // model turns
	// Input is the sum over turns of each turn's input: the tool list plus the whole
	// conversation before the turn (requests, calls, results).
	Input int
	// Carried is the calls and results themselves, each counted once: what the model
	// writes and what the tools answer.
	Carried int
	Total   int // Input + Carried
}

// loopTokens bills one conversation that runs tasks in order over a tool list of list
// tokens. Without search a task is one turn: the model reads the list and the
// conversation, calls the tool, and the call and its result join the conversation. With
// search it is two: the model calls the search tool with the request (call and result
// join the conversation), then calls the tool it found.
func loopTokens(list int, tasks []taskCost, searched bool) loopCost {
	var c loopCost
	history := 0
	for _, t := range tasks {
		history += t.Query
		if searched {
			c.Turns++
			c.Input += list + history
			history += t.Search + t.SearchResult
			c.Carried += t.Search + t.SearchResult
		}
		c.Turns++
		c.Input += list + history
		history += t.Call + t.Result
		c.Carried += t.Call + t.Result
	}
	c.Total = c.Input + c.Carried
	return c
}

// formOutcome is what one form measured on one catalogue.
type formOutcome struct {
	Asked string
	// Served is the form the list showed; notOffered when a search session got no search
	// tool (a build without the search form).
	Served     string
	Tools      int // tools listed
	Pages      int
	ListTokens int
	Loop       loopCost
	Failed     []string // loop calls that did not succeed
	// Found counts loop tasks whose search returned the intended tool (search form).
	Found int
}

// notOffered marks a form the gateway under test does not serve.
const notOffered = "form not offered by this build"

// catalogueOutcome is one catalogue's forms and search queries.
type catalogueOutcome struct {
	Name    string
	Tools   int      // tools in the full list
	Names   []string // their names
	Forms   map[string]*formOutcome
	Set     string // the query set asked (a file under bench/tokens)
	Queries int    // search queries whose tool this catalogue has
	Hits    int    // of them, those whose tool ranked in the top 3
	Hits5   int    // those whose tool ranked in the top 5
	Empty   int    // those whose answer named no tool
	Misses  []string
}

// offered is the outcome of form f when the gateway served it as asked.
func (c *catalogueOutcome) offered(f string) *formOutcome {
	fo := c.Forms[f]
	if fo == nil || fo.Served == notOffered {
		return nil
	}
	return fo
}

// bestSingle is the single form (full, thin, search) with the smallest loop total.
func (c *catalogueOutcome) bestSingle() *formOutcome {
	var best *formOutcome
	for _, f := range []string{formFull, formThin, formSearch} {
		if fo := c.offered(f); fo != nil && (best == nil || fo.Loop.Total < best.Loop.Total) {
			best = fo
		}
	}
	return best
}

func share(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func pctCell(x float64) string { return strconv.FormatFloat(100*x, 'f', 1, 64) + "%" }

// tokenTargets evaluates issue 26's targets over what ran: thin ≤ 20% of full's list on
// medium, search ≤ 5% of full's list on large, top-3 hit rate ≥ 90% on each catalogue
// searched, auto's loop within 10% of the best single form's on each catalogue, and no
// failed loop call. A target whose catalogue or form did not run is left out, with a note
// saying why.
func tokenTargets(cats []*catalogueOutcome) (checks []Check, notes []string) {
	by := map[string]*catalogueOutcome{}
	for _, c := range cats {
		by[c.Name] = c
	}
	if m := by[catMedium]; m != nil && m.offered(formFull) != nil && m.offered(formThin) != nil {
		s := share(m.Forms[formThin].ListTokens, m.Forms[formFull].ListTokens)
		checks = append(checks, Check{What: "thin list tokens vs full, medium catalogue", Want: "≤ 20%", Got: pctCell(s), Pass: s <= thinShareMax})
	} else if m == nil {
		notes = append(notes, "thin vs full on the medium catalogue: the medium catalogue did not run.")
	}
	if l := by[catLarge]; l != nil && l.offered(formSearch) != nil && l.offered(formFull) != nil {
		s := share(l.Forms[formSearch].ListTokens, l.Forms[formFull].ListTokens)
		checks = append(checks, Check{What: "search list tokens vs full, large catalogue", Want: "≤ 5%", Got: pctCell(s), Pass: s <= searchShareMax})
	} else if l != nil {
		notes = append(notes, "search vs full on the large catalogue: "+notOffered+".")
	} else {
		notes = append(notes, "search vs full on the large catalogue: the large catalogue did not run.")
	}
	for _, c := range cats {
		checks = append(checks, catalogueTargets(c, &notes)...)
	}
	return checks, notes
}

// catalogueTargets is one catalogue's hit rate, auto and failed-call targets.
func catalogueTargets(c *catalogueOutcome, notes *[]string) []Check {
	var checks []Check
	if c.offered(formSearch) != nil && c.Queries > 0 {
		rate := share(c.Hits, c.Queries)
		checks = append(checks, Check{What: "search top-3 hit rate, " + c.Name + " catalogue", Want: "≥ 90%",
			Got: fmt.Sprintf("%s (%d of %d)", pctCell(rate), c.Hits, c.Queries), Pass: rate >= hitRateMin})
	}
	if a, best := c.offered(formAuto), c.bestSingle(); a != nil && best != nil {
		x := share(a.Loop.Total, best.Loop.Total)
		checks = append(checks, Check{What: "auto's 10-turn total vs the best single form's (" + best.Asked + "), " + c.Name + " catalogue",
			Want: "≤ 1.10×", Got: fmt.Sprintf("%s (auto served %s)", fmtRatio(x), a.Served), Pass: x <= autoOverMax})
	}
	if c.offered(formSearch) == nil {
		*notes = append(*notes, c.Name+" catalogue: search "+notOffered+"; the best single form is the best of full and thin.")
	}
	failed := 0
	for _, f := range tokenForms() {
		if fo := c.Forms[f]; fo != nil {
			failed += len(fo.Failed)
		}
	}
	checks = append(checks, Check{What: "failed loop calls, " + c.Name + " catalogue", Want: "0", Got: strconv.Itoa(failed), Pass: failed == 0})
	return checks
}
