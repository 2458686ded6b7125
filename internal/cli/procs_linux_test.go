package cli_test

import (
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/hermes-go/hermes/internal/testutil/procs"
)

// procgone FILE...: each FILE holds a pid; wait (up to 10 s) until every one of
// those processes has exited, e.g. the daemons a plugin left, after hermes exited.
func init() {
	scriptCmds["procgone"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) == 0 {
			ts.Fatalf("usage: procgone FILE...")
		}
		deadline := time.Now().Add(10 * time.Second)
		for _, f := range args {
			pid, err := strconv.Atoi(strings.TrimSpace(ts.ReadFile(f)))
			if err != nil || pid <= 1 {
				ts.Fatalf("procgone: %s holds no pid (%q)", f, ts.ReadFile(f))
			}
			for procs.Alive(pid) {
				if time.Now().After(deadline) {
					ts.Fatalf("procgone: process %d (from %s) is still running", pid, f)
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
	}
}
