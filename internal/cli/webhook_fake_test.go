package cli_test

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// The webhookfake script command is the far side of the loopback webhook
// platform plugin of gateway_platform_plugin.txtar: it POSTs users' messages
// to the plugin's HTTP server and takes the replies the plugin POSTs back.
//
//	webhookfake start               # the reply receiver; sets $WEBHOOK_CALLBACK_URL
//	webhookfake post PORTFILE JSON  # POST JSON to the plugin's server, its port in PORTFILE
//	webhookfake wait N              # until N replies came (30 s)
//	webhookfake received            # the replies' bodies, one a line
//	webhookfake kill PIDFILE        # SIGKILL the process whose pid is in PIDFILE
func init() { scriptCmds["webhookfake"] = cmdWebhookFake }

type webhookSink struct {
	mu     sync.Mutex
	bodies []string
}

var (
	whMu    sync.Mutex
	whSinks = map[*testscript.TestScript]*webhookSink{}
)

func cmdWebhookFake(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: webhookfake start | post PORTFILE JSON | wait N | received | kill PIDFILE")
	}
	whMu.Lock()
	sink := whSinks[ts]
	whMu.Unlock()
	switch args[0] {
	case "start":
		sink = &webhookSink{}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		ts.Check(err)
		srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
			sink.mu.Lock()
			sink.bodies = append(sink.bodies, strings.TrimSpace(string(b)))
			sink.mu.Unlock()
			w.WriteHeader(http.StatusNoContent)
		})}
		go func() { _ = srv.Serve(ln) }()
		ts.Defer(func() { _ = srv.Close() })
		whMu.Lock()
		whSinks[ts] = sink
		whMu.Unlock()
		ts.Setenv("WEBHOOK_CALLBACK_URL", "http://"+ln.Addr().String()+"/reply")
	case "post":
		if len(args) != 3 {
			ts.Fatalf("usage: webhookfake post PORTFILE JSON")
		}
		port, err := strconv.Atoi(strings.TrimSpace(ts.ReadFile(args[1])))
		if err != nil {
			ts.Fatalf("webhookfake post: %s holds no port", args[1])
		}
		c := &http.Client{Timeout: 10 * time.Second}
		resp, err := c.Post(fmt.Sprintf("http://127.0.0.1:%d/message", port), "application/json", bytes.NewBufferString(args[2]))
		ts.Check(err)
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			ts.Fatalf("webhookfake post: %s: %s", resp.Status, b)
		}
	case "wait":
		if sink == nil || len(args) != 2 {
			ts.Fatalf("usage: webhookfake start, then webhookfake wait N")
		}
		n, err := strconv.Atoi(args[1])
		ts.Check(err)
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			sink.mu.Lock()
			got := len(sink.bodies)
			sink.mu.Unlock()
			if got >= n {
				return
			}
			if time.Now().After(deadline) {
				ts.Fatalf("webhookfake wait: %d replies after 30s, want %d", got, n)
			}
		}
	case "received":
		if sink == nil {
			ts.Fatalf("webhookfake received: run webhookfake start first")
		}
		sink.mu.Lock()
		for _, b := range sink.bodies {
			fmt.Fprintln(ts.Stdout(), b)
		}
		sink.mu.Unlock()
	case "kill":
		if len(args) != 2 {
			ts.Fatalf("usage: webhookfake kill PIDFILE")
		}
		pid, err := strconv.Atoi(strings.TrimSpace(ts.ReadFile(args[1])))
		if err != nil || pid <= 1 || pid == os.Getpid() {
			ts.Fatalf("webhookfake kill: %s holds no pid", args[1])
		}
		ts.Check(syscall.Kill(pid, syscall.SIGKILL))
	default:
		ts.Fatalf("webhookfake: unknown subcommand %q", args[0])
	}
}
