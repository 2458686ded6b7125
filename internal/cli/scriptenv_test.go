package cli_test

import (
	"os"
	"regexp"
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

// waitfile PATH: wait (up to a minute) until PATH exists, e.g. a marker a plugin
// hook writes, so a script can act at a known point of a background command.
func init() {
	scriptCmds["waitfile"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 1 {
			ts.Fatalf("usage: waitfile PATH")
		}
		path := ts.MkAbs(args[0])
		deadline := time.Now().Add(time.Minute)
		for time.Now().Before(deadline) {
			if _, err := os.Stat(path); err == nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		ts.Fatalf("waitfile: %s did not appear within a minute", args[0])
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
