//go:build race

package tools

// raceEnabled: the race detector makes sync.Pool drop items at random, so
// allocation counts under it wobble by one around a truncated average.
const raceEnabled = true
