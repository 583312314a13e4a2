package gateway

// What the external tests (package gateway_test) may ask of a gateway's insides, to wait
// on an event instead of sleeping.

// OwnCatalogHasPrompt reports whether session sid's own instance of server has re-listed
// a catalogue naming prompt (its name at the upstream), and the session's view has taken
// it in.
func OwnCatalogHasPrompt(g *Gateway, sid, server, prompt string) bool {
	s := g.live.liveSession(sid)
	if s == nil {
		return false
	}
	_, cats := s.Own.Snapshot()
	cat := cats[server]
	if cat == nil {
		return false
	}
	for _, p := range cat.Prompts {
		if p.Name == prompt {
			return true
		}
	}
	return false
}

// OwnToolCounts are the numbers of tools in the catalogues of server that live sessions'
// own instances have re-listed (a session whose instance has not re-listed has none).
func OwnToolCounts(g *Gateway, server string) []int {
	var n []int
	for _, s := range g.live.all() {
		if _, cats := s.Own.Snapshot(); cats[server] != nil {
			n = append(n, len(cats[server].Tools))
		}
	}
	return n
}
