package cli_test

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/hermes-go/hermes/internal/gateway/auth"
)

// pairing-request [-age DURATION] PLATFORM USER_ID [NAME] asks the pairing store
// of $HERMES_HOME for a code, as the gateway does when a stranger writes to the
// bot, and prints the code (for envfrom). -age issues it that long ago (an
// expired code: -age 61m). A NAME in Go quotes, '"\x1b[31mEve"', is unquoted.
func init() {
	scriptCmds["pairing-request"] = cmdPairingRequest
}

func cmdPairingRequest(ts *testscript.TestScript, neg bool, args []string) {
	age := time.Duration(0)
	if len(args) >= 2 && args[0] == "-age" {
		d, err := time.ParseDuration(args[1])
		if err != nil {
			ts.Fatalf("pairing-request: -age %q: %v", args[1], err)
		}
		age, args = d, args[2:]
	}
	if len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: pairing-request [-age DURATION] PLATFORM USER_ID [NAME]")
	}
	name := ""
	if len(args) == 3 {
		name = args[2]
		if uq, err := strconv.Unquote(name); err == nil {
			name = uq // a Go-quoted name carries control characters, as a hostile one would
		}
	}
	p, err := auth.OpenPairing(context.Background(), auth.PairingOptions{
		Home:  ts.Getenv("HERMES_HOME"),
		Env:   ts.Getenv,
		Clock: func() time.Time { return time.Now().Add(-age) },
	})
	ts.Check(err)
	code, err := p.Request(context.Background(), args[0], args[1], name)
	if neg {
		if err == nil {
			ts.Fatalf("pairing-request: got a code, want a refusal")
		}
		fmt.Fprintf(ts.Stdout(), "refused: %v\n", err)
		return
	}
	ts.Check(err)
	fmt.Fprintf(ts.Stdout(), "code %s\n", code)
}
