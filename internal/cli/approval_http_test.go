package cli_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// The approvalhttp script command is the loopback endpoint a test approval
// transport asks (the stand-in for a phone, a pager, a chat):
//
//	approvalhttp start          # sets $APPROVAL_URL; POST it a request, get the current answer
//	approvalhttp answer JSON    # what the next requests get, e.g. {"choice":"once"}, {"forge":true}, {"hang":true}
//	approvalhttp requests       # print every request received (JSON lines) to stdout
//	approvalhttp count N        # exactly N requests were received
//
// {"hang": true} holds the request until the script ends.
func init() {
	scriptCmds["approvalhttp"] = cmdApprovalHTTP
}

type approvalEndpoint struct {
	srv      *httptest.Server
	mu       sync.Mutex
	answer   []byte
	requests [][]byte
	stop     chan struct{}
}

var (
	approvalMu        sync.Mutex
	approvalEndpoints = map[*testscript.TestScript]*approvalEndpoint{}
)

func cmdApprovalHTTP(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: approvalhttp start | answer JSON | requests | count N")
	}
	approvalMu.Lock()
	e := approvalEndpoints[ts]
	approvalMu.Unlock()
	if args[0] != "start" && e == nil {
		ts.Fatalf("approvalhttp %s: run approvalhttp start first", args[0])
	}
	switch args[0] {
	case "start":
		e = &approvalEndpoint{answer: []byte(`{"choice":"deny"}`), stop: make(chan struct{})}
		e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
			e.mu.Lock()
			e.requests = append(e.requests, body)
			answer := e.answer
			e.mu.Unlock()
			var a struct{ Hang bool }
			if json.Unmarshal(answer, &a) == nil && a.Hang {
				select {
				case <-e.stop:
				case <-r.Context().Done():
				case <-time.After(time.Minute):
				}
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(answer)
		}))
		approvalMu.Lock()
		approvalEndpoints[ts] = e
		approvalMu.Unlock()
		ts.Setenv("APPROVAL_URL", e.srv.URL)
		ts.Defer(func() {
			close(e.stop)
			e.srv.Close()
			approvalMu.Lock()
			delete(approvalEndpoints, ts)
			approvalMu.Unlock()
		})
	case "answer":
		if len(args) != 2 || !json.Valid([]byte(args[1])) {
			ts.Fatalf("usage: approvalhttp answer JSON")
		}
		e.mu.Lock()
		e.answer = []byte(args[1])
		e.mu.Unlock()
	case "requests":
		e.mu.Lock()
		for _, r := range e.requests {
			ts.Stdout().Write(append(append([]byte(nil), r...), '\n'))
		}
		e.mu.Unlock()
	case "count":
		var n int
		if len(args) != 2 || json.Unmarshal([]byte(args[1]), &n) != nil {
			ts.Fatalf("usage: approvalhttp count N")
		}
		e.mu.Lock()
		got := len(e.requests)
		e.mu.Unlock()
		if got != n {
			ts.Fatalf("approvalhttp: %d requests received, want %d", got, n)
		}
	default:
		ts.Fatalf("approvalhttp: unknown subcommand %q", args[0])
	}
}
