package pipeio_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/hermes-go/hermes/internal/plugins/runtime/pipeio"
	"github.com/hermes-go/hermes/internal/protocoltest"
	"github.com/hermes-go/hermes/pkg/protocol"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// pipes runs the suite on the host's connection over os.Pipe, the streams a
// plugin process gets.
var pipes = protocoltest.Setup{
	Name:   "os.Pipe",
	Stream: protocoltest.OSPipe,
	NewConn: func(r io.Reader, w io.Writer, h protocol.Handler, opts protocol.ConnOptions) protocoltest.Conn {
		return pipeio.NewConn(r.(*os.File), w, h, opts)
	},
}

// TestConn: the host's connection behaves as every protocol.Conn must.
func TestConn(t *testing.T) { protocoltest.Run(t, pipes) }

// TestConnCloseWakesReadersOfAnOpenPipe: on a pipe whose writer stays open (an
// escaped child of a plugin holds it), Close alone must end Run and fail the call
// whose caller is blocked reading the pipe itself; nothing else will ever wake them.
func TestConnCloseWakesReadersOfAnOpenPipe(t *testing.T) {
	for i := range 20 { // the pump's hand-back races Close: repeat to catch it
		inR, inW, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		c := pipeio.NewConn(inR, io.Discard, nil, protocol.ConnOptions{})
		ran := make(chan error, 1)
		go func() { ran <- c.Run() }()
		callErr := make(chan error, 1)
		if i%2 == 1 {
			// A caller holds the read token, waiting for an answer that never comes.
			go func() { callErr <- c.Call(context.Background(), "never", nil, nil) }()
		} else {
			callErr <- protocol.ErrClosed
		}
		time.Sleep(5 * time.Millisecond) // let the pump (or the caller) block in its read
		c.Close()
		for _, ch := range []chan error{callErr, ran} {
			select {
			case err := <-ch:
				if ch == callErr && !errors.Is(err, protocol.ErrClosed) {
					t.Fatalf("pending call returned %v, want ErrClosed", err)
				}
			case <-time.After(2 * time.Second):
				t.Fatalf("round %d: Close did not wake the reader: %s", i, c.State())
			}
		}
		inW.Close()
		inR.Close()
	}
}

// TestConnState: a stall report sees the read token and the last ids each way
// next to the calls pending.
func TestConnState(t *testing.T) {
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer inR.Close()
	defer inW.Close()
	c := pipeio.NewConn(inR, io.Discard, nil, protocol.ConnOptions{})
	ran := make(chan error, 1)
	go func() { ran <- c.Run() }()
	defer func() { c.Close(); <-ran }()
	go func() {
		time.Sleep(5 * time.Millisecond)
		_, _ = inW.WriteString(`{"jsonrpc":"2.0","id":1,"result":"ok"}` + "\n")
	}()
	var got string
	if err := c.Call(context.Background(), "m", nil, &got); err != nil || got != "ok" {
		t.Fatalf("Call = %q, %v", got, err)
	}
	state := c.State()
	for _, want := range []string{"read token free=", "calls waiting=0", "messages read=1", "last response id=1",
		"requests written=1", "last request id=1", "pending ids=[]", "stopped=false"} {
		if !strings.Contains(state, want) {
			t.Errorf("State() = %q, no %q", state, want)
		}
	}
}

// TestConnCallDecodesStrings: a string result, plain or with escapes, decodes
// as encoding/json decodes it, on the fast path or off it; a result that is not
// a string fails as protocol.Conn.Call fails.
func TestConnCallDecodesStrings(t *testing.T) {
	tests := []struct {
		result, want, wantErr string
	}{
		{`"{\"success\": true}"`, `{"success": true}`, ""},
		{`"\u00e9t\u00e9"`, "été", ""},
		{`""`, "", ""},
		{`12`, "", "decode m result"},
	}
	for _, tt := range tests {
		a, _ := protocoltest.Pair(t, pipes, nil, func(context.Context, string, json.RawMessage) (any, error) {
			return json.RawMessage(tt.result), nil
		}, protocol.ConnOptions{})
		got := "unchanged"
		err := a.Conn.Call(context.Background(), "m", nil, &got)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("result %s: err %v, want %q", tt.result, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("result %s: %q, %v; want %q", tt.result, got, err, tt.want)
		}
	}
}

// TestNewConnOnAFileWithoutDeadlines: a reader that is not a pipe takes no
// read deadlines; the connection reads it with the default transport.
func TestNewConnOnAFileWithoutDeadlines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in")
	if err := os.WriteFile(path, []byte(`{"jsonrpc":"2.0","method":"note","params":1}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	noted := make(chan struct{}, 1)
	c := pipeio.NewConn(f, io.Discard, func(context.Context, string, json.RawMessage) (any, error) {
		noted <- struct{}{}
		return nil, nil
	}, protocol.ConnOptions{})
	if err := c.Run(); !errors.Is(err, io.EOF) {
		t.Fatalf("Run = %v, want io.EOF", err)
	}
	select {
	case <-noted:
	default:
		t.Fatal("the notification was not delivered")
	}
	if state := c.State(); strings.Contains(state, "read token") {
		t.Fatalf("State() = %q: a transport of its own on a regular file", state)
	}
}
