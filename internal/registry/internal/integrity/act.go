package integrity

import "time"

// PendingAct is an admin act that added or changed a server or plugin: the first
// catalogue of it read before Until that changes something is accepted by By.
type PendingAct struct {
	By    string
	Until time.Time
}
