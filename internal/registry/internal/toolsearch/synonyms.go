package toolsearch

// synonymGroups are the words a query term may also match, at SynonymWeight of the
// weight of an exact match: a fixed table, written by hand, not learned. Each group is
// words of one meaning in tool names and requests; a word is in at most one group. The
// words are stemmed when an index is built, so their forms (removes, removing) count too.
func synonymGroups() [][]string {
	return [][]string{
		{"get", "fetch", "read", "retrieve", "find", "search", "list", "lookup", "look", "query", "show", "view", "browse"},
		{"create", "add", "insert", "new", "make", "publish", "record", "register", "draft", "compose", "link", "connect", "attach", "issue", "log"},
		{"delete", "remove", "drop", "destroy", "erase", "purge"},
		{"update", "edit", "modify", "change", "patch", "alter", "amend", "approve", "reject", "mark", "assign"},
		{"write", "save", "store", "put"},
		{"move", "rename", "relocate"},
		{"run", "execute", "invoke", "trigger", "start", "launch"},
		{"directory", "folder", "dir"},
		{"env", "environment"},
		{"image", "picture", "photo", "logo"},
		{"info", "information", "metadata", "detail", "stat"},
		{"compress", "zip", "gzip", "archive"},
		{"sum", "total", "plus"},
		{"count", "many", "tally"},
	}
}

// synonymTable maps each stemmed word of synonymGroups to the other stems of its group.
func synonymTable() map[string][]string {
	table := map[string][]string{}
	for _, group := range synonymGroups() {
		stems := make([]string, 0, len(group))
		for _, w := range group {
			stems = append(stems, Stem(w))
		}
		for i, s := range stems {
			for j, o := range stems {
				if i != j && o != s {
					table[s] = append(table[s], o)
				}
			}
		}
	}
	return table
}

// changeWords are the words that ask for a change: a query with none of them is taken
// for a request to read (ReadBonus). The verbs of the create, delete, update, write, move
// and run groups, and a few more that change state.
func changeWords() []string {
	words := []string{"set", "send", "post", "upload", "import", "submit", "cancel", "close", "enable", "disable",
		"toggle", "clear", "truncate", "reset", "schedule", "book", "pay", "transfer", "merge", "archive"}
	for _, g := range synonymGroups() {
		switch g[0] {
		case "create", "delete", "update", "write", "move", "run":
			words = append(words, g...)
		}
	}
	return words
}

// changeStems is changeWords stemmed, as a set.
func changeStems() map[string]bool { return stemSet(changeWords()) }

// countWords are the words that ask for a number (and so does "number of", see
// asksNumber): without one, a tool that counts ranks lower (CountPenalty); with one, higher
// (CountBonus).
func countWords() []string {
	return []string{"count", "many", "total", "tally", "how"}
}

// stemSet is words stemmed, as a set.
func stemSet(words []string) map[string]bool {
	set := map[string]bool{}
	for _, w := range words {
		set[Stem(w)] = true
	}
	return set
}
