package cli_test

import (
	"bytes"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// envfrom VAR REGEXP [stdout|stderr]: set $VAR to the first submatch of REGEXP in the
// last command's output (stdout by default), e.g. a session id a command printed.
func init() {
	scriptCmds["envfrom"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) < 2 || len(args) > 3 {
			ts.Fatalf("usage: envfrom VAR REGEXP [stdout|stderr]")
		}
		text := ts.ReadFile("stdout")
		if len(args) == 3 {
			text = ts.ReadFile(args[2])
		}
		re, err := regexp.Compile(`(?m)` + args[1])
		ts.Check(err)
		m := re.FindStringSubmatch(text)
		if len(m) < 2 {
			ts.Fatalf("envfrom: %q does not match the output", args[1])
		}
		ts.Setenv(args[0], m[1])
	}
}

// waitfile PATH [LINES]: wait (up to a minute) until PATH exists (with at least
// LINES lines), e.g. a marker a plugin hook writes, so a script can act at a
// known point of a background command.
func init() {
	scriptCmds["waitfile"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) < 1 || len(args) > 2 {
			ts.Fatalf("usage: waitfile PATH [LINES]")
		}
		path := ts.MkAbs(args[0])
		lines := 0
		if len(args) == 2 {
			n, err := strconv.Atoi(args[1])
			if err != nil || n < 1 {
				ts.Fatalf("waitfile: LINES is %q: use a number from 1", args[1])
			}
			lines = n
		}
		deadline := time.Now().Add(time.Minute)
		for time.Now().Before(deadline) {
			if b, err := os.ReadFile(path); err == nil && bytes.Count(b, []byte("\n")) >= lines {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		ts.Fatalf("waitfile: %s did not appear (with %d lines) within a minute", args[0], lines)
	}
}

// lastline FILE: print FILE's last non-empty line to stdout, e.g. the latest
// request in $WORK/fakellm-requests.jsonl, so stdout/! stdout check just that one.
func init() {
	scriptCmds["lastline"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 1 {
			ts.Fatalf("usage: lastline FILE")
		}
		lines := strings.Split(strings.TrimRight(ts.ReadFile(args[0]), "\n"), "\n")
		ts.Stdout().Write([]byte(lines[len(lines)-1] + "\n"))
	}
}
