//go:build !race

package catalog

// raceSlowdown is 1 without the race detector (race_test.go).
const raceSlowdown = 1
