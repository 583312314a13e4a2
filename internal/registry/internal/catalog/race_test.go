//go:build race

package catalog

// raceSlowdown scales the time bounds of tests that catch unbounded work: the race
// detector makes the same bounded work 5–10 times slower, and make test-unit runs with it.
const raceSlowdown = 10
