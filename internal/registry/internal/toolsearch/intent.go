package toolsearch

import (
	"slices"
	"strings"
)

// intentOf weighs the operations of a plugin resource for a request by its form, best 1
// (opWeights): "how many" and "number of" count; "every row" truncates; a request led by a
// verb of an operation (add, book, register, log … create; change, move, approve … update;
// remove, cancel … delete; fetch … get; search, look … find; list, browse … list) asks for
// it, as does one leading a later clause (the pump is broken, report it) or a phrasal verb
// (take him off the list: delete; put off the start: update), and so does such a word
// anywhere else in a request that is no question; then "all", "every" and
// "upcoming" list, "details", "id" or a number get, and a question (which, who, what, is …)
// finds. A request in nouns alone reads: find, list, get, in that order, close together, so
// a table's three read tools share its top places.
func intentOf(query string) [numOps]float64 {
	lower := strings.ToLower(query)
	ws := words(lower)
	has := func(set []string) bool {
		return slices.ContainsFunc(ws, func(w string) bool { return slices.Contains(set, w) })
	}
	switch {
	case strings.Contains(lower, "how many") || asksCount(ws) || has([]string{"count", "total", "altogether"}):
		return opWeights(opCount)
	case has([]string{"truncate"}) || strings.Contains(lower, "every row") || strings.Contains(lower, "all rows") || strings.Contains(lower, "all the rows") ||
		(has(emptyVerbs()) && has([]string{"all", "every", "everything"})):
		return opWeights(opTruncate)
	}
	lists := [...]struct {
		op    int
		words []string
	}{{opDelete, deleteVerbs()}, {opCreate, createVerbs()}, {opUpdate, updateVerbs()}, {opGet, getVerbs()}, {opFind, findVerbs()}, {opList, listVerbs()}}
	if len(ws) > 0 && slices.Contains(readVerbs(), ws[0]) && namesRecord(ws) {
		return opWeights(opGet)
	}
	for _, lead := range clauseLeads(lower) {
		if op := phrasalOp(lead); op >= 0 {
			return opWeights(op)
		}
		for _, l := range lists {
			if slices.Contains(l.words, lead[0]) {
				return opWeights(l.op)
			}
		}
	}
	for _, l := range lists[:3] {
		if !isQuestion(lower) && has(explicitOnly(l.words)) {
			return opWeights(l.op)
		}
	}
	switch {
	case has([]string{"all", "every", "list", "upcoming", "coming"}):
		return opWeights(opList)
	case has([]string{"details", "id"}) || slices.ContainsFunc(ws, isNumber):
		return opWeights(opGet)
	case isQuestion(lower):
		return opWeights(opFind)
	}
	return opWeights(-1)
}

// explicitOnly is the first few words of an operation's list: those that ask for it
// wherever they stand in a request (the rest ask for it only leading it).
func explicitOnly(ws []string) []string { return ws[:min(len(ws), 8)] }

// opWeights is the weight of each operation when the request asks for op (-1: to read,
// without saying how).
func opWeights(op int) [numOps]float64 {
	switch op {
	case opCount:
		return [numOps]float64{opCount: 1, opFind: 0.6, opList: 0.5, opGet: 0.3}
	case opTruncate:
		return [numOps]float64{opTruncate: 1, opDelete: 0.8, opUpdate: 0.3}
	case opDelete:
		return [numOps]float64{opDelete: 1, opUpdate: 0.8, opTruncate: 0.3, opFind: 0.3, opGet: 0.3}
	case opCreate:
		return [numOps]float64{opCreate: 1, opUpdate: 0.6, opFind: 0.5, opGet: 0.3, opList: 0.3}
	case opUpdate:
		return [numOps]float64{opUpdate: 1, opCreate: 0.6, opFind: 0.5, opGet: 0.4}
	case opGet:
		return [numOps]float64{opGet: 1, opFind: 0.9, opList: 0.6, opCount: 0.2}
	case opFind:
		return [numOps]float64{opFind: 1, opGet: 0.5, opList: 0.45, opCount: 0.3, opCreate: 0.2}
	case opList:
		return [numOps]float64{opList: 1, opFind: 0.9, opGet: 0.6, opCount: 0.2}
	}
	return [numOps]float64{opFind: 1, opList: 0.95, opGet: 0.9, opCount: 0.3, opCreate: 0.35, opUpdate: 0.2}
}

// asksCount tells whether the words say "number of" as a count does: first, or after a
// determiner or a word like "total" (the number of depots); after another noun it names an
// identifier (the phone number of a parent).
func asksCount(ws []string) bool {
	for i := 0; i+1 < len(ws); i++ {
		if ws[i] != "number" || ws[i+1] != "of" {
			continue
		}
		if i == 0 || slices.Contains([]string{"the", "a", "total", "what", "whole", "overall", "is", "s"}, ws[i-1]) {
			return true
		}
	}
	return false
}

// namesRecord tells whether the words name one record by its number ("invoice number 2",
// "look up vehicle 2", "room 3's details"): a number after a word that is no quantity or
// comparison word ("over 100", "the 10 latest", "last 5" are values and limits, not ids).
func namesRecord(ws []string) bool {
	for i := 1; i < len(ws); i++ {
		if isNumber(ws[i]) && !slices.Contains(quantityWords(), ws[i-1]) {
			return true
		}
	}
	return false
}

// quantityWords come before a number that is a value or a limit rather than a record's id.
func quantityWords() []string {
	return []string{"over", "under", "above", "below", "than", "the", "last", "first", "top", "next",
		"latest", "more", "less", "least", "most", "at", "by", "to", "from", "between", "and", "of", "within", "about", "around", "plus", "minus", "times"}
}

// readVerbs lead a request to read, however it says how: a get, find or list verb, or "see".
func readVerbs() []string {
	return slices.Concat(getVerbs(), findVerbs(), listVerbs(), []string{"see", "display", "give"})
}

// isNumber tells whether a word is all digits.
func isNumber(w string) bool {
	return w != "" && strings.Trim(w, "0123456789") == ""
}

// createVerbs lead requests that make a record; the first eight ask for it anywhere.
func createVerbs() []string {
	return []string{"create", "add", "register", "new", "publish", "submit", "insert", "post", "book", "sign", "log",
		"record", "make", "enter", "report", "lend", "loan", "reserve", "schedule", "order", "enrol", "enroll", "open",
		"raise", "lodge", "file", "note", "issue", "write", "give", "send", "hire", "rent", "claim", "apply", "request",
		"admit", "invite", "ask", "put", "start", "set", "let", "sell", "buy", "purchase"}
}

// updateVerbs lead requests that change a record; the first eight ask for it anywhere.
func updateVerbs() []string {
	return []string{"update", "change", "edit", "modify", "reassign", "amend", "alter", "reschedule", "move",
		"approve", "reject", "answer", "mark", "assign", "correct", "fix", "rename", "extend", "renew", "close",
		"complete", "finish", "return", "pay", "qualify", "freeze", "pause", "suspend", "resume", "postpone",
		"defer", "delay", "keep"}
}

// deleteVerbs lead requests that remove a record; the first eight ask for it anywhere.
func deleteVerbs() []string {
	return []string{"delete", "remove", "cancel", "erase", "forget", "discard", "withdraw", "drop"}
}

// getVerbs lead requests for one record.
func getVerbs() []string { return []string{"get", "fetch", "retrieve", "open", "read", "view"} }

// findVerbs lead requests for the records that match something.
func findVerbs() []string {
	return []string{"find", "search", "look", "lookup", "query", "filter", "locate"}
}

// listVerbs lead requests for every record.
func listVerbs() []string { return []string{"list", "show", "browse", "page", "enumerate"} }

// clauseLeads are the words of each clause of a request that starts with a word (a clause
// ends at a comma, a semicolon, a colon, a full stop, a question or exclamation mark or a
// dash), less a leading courtesy or link word (please, then, and, so, now, just): an
// imperative leads its clause, wherever the clause stands.
func clauseLeads(lower string) [][]string {
	var leads [][]string
	for _, clause := range strings.FieldsFunc(lower, func(r rune) bool {
		return strings.ContainsRune(",;:.!?–—", r)
	}) {
		ws := words(clause)
		for len(ws) > 0 && slices.Contains([]string{"please", "then", "and", "so", "now", "just", "also", "but"}, ws[0]) {
			ws = ws[1:]
		}
		if len(ws) > 0 {
			leads = append(leads, ws)
		}
	}
	return leads
}

// phrasalOp is the operation a clause led by a phrasal verb asks for, or -1: "take … off"
// and "cross … off" remove, "put … off" and "push … back" move a record, "sign … up" and
// "write … down" make one. The particle may stand up to three words after the verb (take
// Tom off the class).
func phrasalOp(ws []string) int {
	if len(ws) < 2 {
		return -1
	}
	particle := func(p string) bool { return slices.Contains(ws[1:min(len(ws), 5)], p) }
	switch {
	case (ws[0] == "take" || ws[0] == "cross" || ws[0] == "strike") && particle("off"):
		return opDelete
	case (ws[0] == "put" && particle("off")) || (ws[0] == "push" && particle("back")):
		return opUpdate
	case (ws[0] == "sign" && particle("up")) || (ws[0] == "write" && particle("down")):
		return opCreate
	}
	return -1
}

// emptyVerbs, said of all or every record, empty a table (wipe every old check-in, clear
// out all the bookings).
func emptyVerbs() []string { return []string{"wipe", "clear", "empty", "purge", "truncate"} }
