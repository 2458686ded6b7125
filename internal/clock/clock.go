// Package clock is where hermes reads the wall clock. Code that needs the time
// takes a clock function in its options (tests give a fixed or stepping one);
// Now, the system's, is the default they fall back to. Keeping the one reading
// here lets the linter hold every other package to that (see .golangci.yml).
package clock

import "time"

// Now is the system's current time.
func Now() time.Time { return time.Now() }
