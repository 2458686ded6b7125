// Package startmem sets the memory policy of a short hermes process before the
// other packages initialise: less garbage collection in the first seconds, and
// (on Linux) a heap backed by transparent huge pages.
//
// Why: most hermes commands live 10-50 ms, and on virtual machines that shadow
// page tables a first touch of a 4 KiB page costs 7-20 µs (measured here: a
// `plugins list` over 200 plugins took ~1,200 page faults, ~800 of them fresh
// heap pages, more than half its run time). One 2 MiB huge page costs about as
// much as 25 small faults and then covers 512 pages. See docs/PERFORMANCE.md.
//
// cmd/hermes imports it first; tests do not, so their heaps behave as usual.
package startmem

import (
	"os"
	"runtime/debug"
	"strings"
	"time"
)

// Start-up leaves a few MB live (package inits, config, manifests), so with the
// default GOGC the heap passes its first 4 MB goal and a collection runs just
// before a short command exits. For the first seconds hermes collects less often,
// then goes back to the default.
const (
	startupGCPercent = 400
	startupGCWindow  = 2 * time.Second
)

func init() {
	// A GOGC or GOMEMLIMIT the user set is theirs: no GC change and no heap
	// shaping, which assumes the start-up heap goal is well above 8 MB.
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	prev := debug.SetGCPercent(startupGCPercent)
	time.AfterFunc(startupGCWindow, func() { debug.SetGCPercent(prev) })
	// GODEBUG=disablethp=1 is the Go runtime's own switch against huge pages
	// for the heap; honour it here too.
	if !strings.Contains(os.Getenv("GODEBUG"), "disablethp=1") {
		adviseHugeHeap()
	}
}
