package pluginproc

// Spinning is how many of b's busy waits are running, for the external test package.
func (b *BusyWait) Spinning() int64 { return b.s.Spinning() }
