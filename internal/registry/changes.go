package registry

import "sync/atomic"

// changes counts the changes of the registry's catalogues and states (Registry.Gen) and
// tells them (Registry.OnChange).
type changes struct {
	// gen changes whenever any server's or plugin's catalogue or state changes.
	gen atomic.Uint64
	// on is the registry's OnChange as it is now (set after New, before Start).
	on func() func(server string)
}

// note counts a change of server's catalogue or state and tells OnChange, from its own
// goroutine.
func (c *changes) note(server string) {
	c.gen.Add(1)
	if f := c.on(); f != nil {
		go f(server)
	}
}
