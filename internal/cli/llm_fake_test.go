package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/hermes-go/hermes/internal/llm/llmtest"
)

// The fakellm script command serves a scripted conversation on a loopback port so
// `hermes chat` can be tested end to end:
//
//	fakellm start replies.json   # JSON or YAML: {"replies": [...]} or a bare list (llmtest.Reply)
//	                             # sets $FAKELLM_URL (the base URL, ending in /v1) and records
//	                             # every request body to $WORK/fakellm-requests.jsonl
//	fakellm requests             # print the requests received (JSON, indented) to stdout
//	fakellm last                 # print only the last request received (JSON, indented)
//	fakellm header NAME          # that header of each request received, one a line
//	fakellm count N              # the server has received exactly N requests
//	fakellm pending N            # N scripted replies are still unused
//	fakellm stop                 # optional: the server also stops when the script ends
//
// config.yaml then says `model: {default: fake, base_url: "${FAKELLM_URL}"}` (a
// loopback base URL needs no API key).
func init() {
	scriptCmds["fakellm"] = cmdFakeLLM
}

var (
	fakeMu      sync.Mutex
	fakeServers = map[*testscript.TestScript]*llmtest.Server{}
)

func cmdFakeLLM(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) == 0 {
		ts.Fatalf("usage: fakellm start FILE | requests | last | count N | pending N | stop")
	}
	fakeMu.Lock()
	srv := fakeServers[ts]
	fakeMu.Unlock()
	need := func() *llmtest.Server {
		if srv == nil {
			ts.Fatalf("fakellm %s: no server; run fakellm start FILE first", args[0])
		}
		return srv
	}
	number := func() int {
		if len(args) != 2 {
			ts.Fatalf("usage: fakellm %s N", args[0])
		}
		n, err := strconv.Atoi(args[1])
		if err != nil {
			ts.Fatalf("fakellm %s: %q is not a number", args[0], args[1])
		}
		return n
	}
	switch args[0] {
	case "start":
		if neg || len(args) != 2 {
			ts.Fatalf("usage: fakellm start FILE")
		}
		if srv != nil {
			ts.Fatalf("fakellm start: already running at %s", srv.URL)
		}
		replies, err := llmtest.ReadScript(ts.MkAbs(args[1]))
		ts.Check(err)
		rec, err := os.Create(ts.MkAbs("fakellm-requests.jsonl"))
		ts.Check(err)
		s := llmtest.Start()
		s.RecordTo(rec)
		s.Enqueue(replies...)
		fakeMu.Lock()
		fakeServers[ts] = s
		fakeMu.Unlock()
		ts.Setenv("FAKELLM_URL", s.URL)
		ts.Defer(func() {
			stopFake(ts)
			rec.Close()
		})
	case "requests":
		b, err := json.MarshalIndent(need().Requests(), "", "  ")
		ts.Check(err)
		fmt.Fprintf(ts.Stdout(), "%s\n", b)
	case "last":
		reqs := need().Requests()
		if len(reqs) == 0 {
			ts.Fatalf("fakellm last: no request received yet")
		}
		b, err := json.MarshalIndent(reqs[len(reqs)-1], "", "  ")
		ts.Check(err)
		fmt.Fprintf(ts.Stdout(), "%s\n", b)
	case "count":
		want, got := number(), len(need().Requests())
		if (got == want) == neg {
			ts.Fatalf("fakellm received %d requests, want %s%d", got, map[bool]string{true: "not "}[neg], want)
		}
	case "pending":
		want, got := number(), need().Pending()
		if (got == want) == neg {
			ts.Fatalf("fakellm has %d unused replies, want %s%d", got, map[bool]string{true: "not "}[neg], want)
		}
	case "header":
		// header NAME: that header of every request received, one line each
		// ("-" when a request had none).
		if len(args) != 2 {
			ts.Fatalf("usage: fakellm header NAME")
		}
		for _, r := range need().Requests() {
			v := r.Header.Get(args[1])
			if v == "" {
				v = "-"
			}
			fmt.Fprintln(ts.Stdout(), v)
		}
	case "stop":
		need()
		stopFake(ts)
	default:
		ts.Fatalf("fakellm: unknown subcommand %q (start, requests, count, pending, stop)", args[0])
	}
}

func stopFake(ts *testscript.TestScript) {
	fakeMu.Lock()
	s := fakeServers[ts]
	delete(fakeServers, ts)
	fakeMu.Unlock()
	if s != nil {
		s.Close()
	}
}
