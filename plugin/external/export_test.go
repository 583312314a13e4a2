package external

// For the external test package: how many busy waits started, how many are running.
var BusyWaits, BusyWaiting = &spins, &spinning
