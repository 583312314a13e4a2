package ui

// runnersPort is the part of the gateway that knows its executors' runners; a Port without
// it shows none.
type runnersPort interface {
	// RunnerStates is every executor's runner (GET /api/runners).
	RunnerStates() any
}

// runnerStates are the runners the Executors page lists (nil: none).
func (u *UI) runnerStates() any {
	if rp, ok := u.port.(runnersPort); ok {
		return rp.RunnerStates()
	}
	return nil
}
