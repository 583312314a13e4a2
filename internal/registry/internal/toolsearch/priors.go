package toolsearch

import (
	"slices"
	"strings"
)

// CreateBonus multiplies the score of a tool whose own name says it creates, for a query
// that asks for something to be done without naming how (book a room, report a hole, lend
// a book): a request to act on a record most often makes one.
const CreateBonus = 1.5

// CountBonus multiplies the score of a tool whose own name says it counts, for a query that
// asks for a number.
const CountBonus = 1.5

// asksNumber tells whether the query says "number of" (a phone number does not ask for a
// count; the number of depots does).
func asksNumber(query string) bool {
	return strings.Contains(strings.ToLower(query), "number of")
}

// priors applies the lexical priors to the matched documents' scores (see the package
// comment): CountPenalty without a word that asks for a number; ReadBonus for a request
// that asks for no change (one that asks for a number never does); CreateBonus for one
// that asks for a change by a verb of no operation group.
func (ix *Index) priors(query string, terms []string, matched []int32, scores []float64) {
	counting := asksNumber(query) || slices.ContainsFunc(terms, func(t string) bool { return ix.counting[t] })
	// A tool that counts answers "how many"; for any other request its data is more likely
	// wanted from its siblings that list, find or get it.
	factor := CountPenalty
	if counting {
		factor = CountBonus
	}
	for _, d := range matched {
		if ix.counter[d] {
			scores[d] *= factor
		}
	}
	// A request for a number is a request to read, whatever its verbs (how many people
	// are registered, number of depots we run).
	// So is a question (which books are out on loan, what homework is set).
	read := counting || isQuestion(query)
	change := !read && slices.ContainsFunc(terms, func(t string) bool { return ix.changes[t] })
	verb := !read && ix.leadingVerb(query)
	if !change && !verb {
		// A request that asks for no change is a request to read: among tools that match
		// it as well, the one that changes nothing is the likelier (a table's find over
		// its create, whose parameters name every column).
		for _, d := range matched {
			if ix.readOnly[d] {
				scores[d] *= ReadBonus
			}
		}
		return
	}
	if slices.ContainsFunc(terms, func(t string) bool { return ix.explicit[t] || ix.creating[t] }) {
		return // the query names its operation: the synonym table matches it
	}
	for _, d := range matched {
		if ix.creator[d] {
			scores[d] *= CreateBonus
		}
	}
}

// leadingVerb tells whether the query starts with one of requestVerbs: an imperative that
// asks for something done without naming the operation (book a room, report a pothole).
func (ix *Index) leadingVerb(query string) bool {
	ws := words(query)
	return len(ws) > 0 && ix.requests[Stem(strings.ToLower(ws[0]))]
}

// isQuestion tells whether the query starts as a question does (which, what, who, is,
// does …): it asks to be told, not for a change.
func isQuestion(query string) bool {
	ws := words(query)
	if len(ws) == 0 {
		return false
	}
	switch strings.ToLower(ws[0]) {
	case "which", "what", "who", "whom", "whose", "when", "where", "why", "how",
		"is", "are", "was", "were", "do", "does", "did", "has", "have", "any":
		return true
	}
	return false
}

// groupOf is the synonym group whose first word is head.
func groupOf(head string) []string {
	for _, g := range synonymGroups() {
		if g[0] == head {
			return g
		}
	}
	return nil
}

// explicitStems are the stems of the operation groups other than create (update, delete,
// write, move, run).
func explicitStems() map[string]bool {
	var ws []string
	for _, h := range []string{"update", "delete", "write", "move", "run"} {
		ws = append(ws, groupOf(h)...)
	}
	return stemSet(ws)
}

// requestVerbs are verbs that, leading a request, ask for a record to be made without
// naming the operation (book a room, report a pothole, lend a book, claim a refund), beyond
// changeWords, which count wherever they stand. A hand-written list: a word here that
// also reads (note, file) only tips a tie towards the tool that creates.
func requestVerbs() []string {
	return []string{"book", "reserve", "schedule", "order", "report", "lend", "loan", "borrow", "claim",
		"enrol", "enroll", "sign", "apply", "request", "raise", "lodge", "file", "note", "send", "hire", "rent",
		"refund", "return", "renew", "invite", "admit", "discharge", "dispatch", "ship", "deliver", "collect"}
}
