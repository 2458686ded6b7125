// Package protocoltest is the behaviour every protocol.Conn must have, whatever
// reads its stream: pkg/protocol runs it on its default transport, pipeio on
// the host's.
package protocoltest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hermes-go/hermes/pkg/protocol"
)

// Guard bounds every wait so a regression fails instead of hanging the suite.
const Guard = 10 * time.Second

// Conn is what the suite uses of a connection: a *protocol.Conn, or a type
// that wraps one.
type Conn interface {
	Call(ctx context.Context, method string, params, result any) error
	Notify(method string, params any) error
	Run() error
	Close() error
	Done() <-chan struct{}
	Err() error
	State() string
}

// Setup is one way to build the connections under test.
type Setup struct {
	Name string
	// Stream makes a one-way stream; a Conn reads one and writes another.
	Stream func(t *testing.T) (io.ReadCloser, io.WriteCloser)
	// NewConn connects over r and w.
	NewConn func(r io.Reader, w io.Writer, h protocol.Handler, opts protocol.ConnOptions) Conn
}

// OSPipe is a Stream of os.Pipe.
func OSPipe(t *testing.T) (io.ReadCloser, io.WriteCloser) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	return r, w
}

// IOPipe is a Stream of io.Pipe.
func IOPipe(*testing.T) (io.ReadCloser, io.WriteCloser) {
	r, w := io.Pipe()
	return r, w
}

// Run runs the suite on each setup.
func Run(t *testing.T, setups ...Setup) {
	tests := []struct {
		name string
		run  func(t *testing.T, s Setup)
	}{
		{"ConcurrentCallsBothDirections", concurrentCallsBothDirections},
		{"CancelSendsCancelRequestAndDropsLateResponse", cancelSendsCancelRequestAndDropsLateResponse},
		{"DeadlineSendsCancel", deadlineSendsCancel},
		{"MalformedInputStopsConn", malformedInputStopsConn},
		{"OversizedLine", oversizedLine},
		{"PeerCloseFailsPendingCalls", peerCloseFailsPendingCalls},
		{"CloseFailsPendingCallsAndCancelsHandlers", closeFailsPendingCallsAndCancelsHandlers},
		{"HandlerPanicBecomesErrorResponse", handlerPanicBecomesErrorResponse},
		{"OutgoingOverCapFailsOnlyThatMessage", outgoingOverCapFailsOnlyThatMessage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, s := range setups {
				t.Run(s.Name, func(t *testing.T) { tt.run(t, s) })
			}
		})
	}
}

// End is one side of a connected pair.
type End struct {
	Conn Conn
	Out  io.WriteCloser // what this side writes; closing it is "this side hangs up"
	In   io.ReadCloser
	ran  chan struct{} // closed when Run returns
	err  error         // Run's result, once ran is closed
}

// Wait waits for Run to return, and returns its result.
func (e *End) Wait(t *testing.T) error {
	t.Helper()
	select {
	case <-e.ran:
		return e.err
	case <-time.After(Guard):
		t.Fatal("Run did not return")
		return nil
	}
}

// Pair connects two Conns. Cleanup stops both and waits for their Run loops.
func Pair(t *testing.T, s Setup, ha, hb protocol.Handler, opts protocol.ConnOptions) (a, b *End) {
	t.Helper()
	abR, abW := s.Stream(t) // a → b
	baR, baW := s.Stream(t) // b → a
	a = &End{Out: abW, In: baR, ran: make(chan struct{})}
	b = &End{Out: baW, In: abR, ran: make(chan struct{})}
	a.Conn = s.NewConn(baR, abW, ha, opts)
	b.Conn = s.NewConn(abR, baW, hb, opts)
	for _, e := range []*End{a, b} {
		go func() { e.err = e.Conn.Run(); close(e.ran) }()
	}
	t.Cleanup(func() {
		a.Conn.Close()
		b.Conn.Close()
		for _, c := range []io.Closer{abW, baW, abR, baR} {
			c.Close()
		}
		for _, e := range []*End{a, b} {
			select {
			case <-e.ran:
			case <-time.After(Guard):
				t.Errorf("Run did not return after the connection and its pipes were closed")
			}
		}
	})
	return a, b
}

// Raw gives a Conn a stream the test writes by hand (feed); what it writes is
// discarded.
func Raw(t *testing.T, s Setup, h protocol.Handler, opts protocol.ConnOptions) (c Conn, feed io.WriteCloser, ran chan error) {
	t.Helper()
	inR, inW := s.Stream(t)
	outR, outW := s.Stream(t)
	go func() { _, _ = io.Copy(io.Discard, outR) }()
	c = s.NewConn(inR, outW, h, opts)
	ran = make(chan error, 1)
	go func() { ran <- c.Run() }()
	t.Cleanup(func() {
		c.Close()
		inW.Close()
		outW.Close()
		inR.Close()
		outR.Close()
	})
	return c, inW, ran
}

// WaitRun waits for what Run returned on ran.
func WaitRun(t *testing.T, ran chan error) error {
	t.Helper()
	select {
	case err := <-ran:
		return err
	case <-time.After(Guard):
		t.Fatal("Run did not return")
		return nil
	}
}

// EchoParams are the params of the suite's echo calls.
type EchoParams struct {
	From string `json:"from"`
	N    int    `json:"n"`
}

// concurrentCallsBothDirections runs many calls at once from both sides, some
// of them calling back into the caller from inside the handler, and checks that every
// caller gets its own answer.
func concurrentCallsBothDirections(t *testing.T, setup Setup) {
	var a, b *End
	handler := func(self string) protocol.Handler {
		return func(ctx context.Context, method string, params json.RawMessage) (any, error) {
			var p EchoParams
			if err := json.Unmarshal(params, &p); err != nil {
				return nil, err
			}
			switch method {
			case "echo":
				return fmt.Sprintf("%s:%s:%d", self, p.From, p.N), nil
			case "nested": // call the caller back before answering
				own := a
				if self == "b" {
					own = b
				}
				var inner string
				if err := own.Conn.Call(ctx, "echo", EchoParams{From: self + "-nested", N: p.N}, &inner); err != nil {
					return nil, err
				}
				return inner, nil
			}
			return nil, protocol.Errorf(protocol.CodeMethodNotFound, "no %s", method)
		}
	}
	a, b = Pair(t, setup, handler("a"), handler("b"), protocol.ConnOptions{})

	ctx, cancel := context.WithTimeout(context.Background(), Guard)
	defer cancel()
	const perSide = 40
	var wg sync.WaitGroup
	errs := make(chan error, 4*perSide)
	for _, side := range []struct {
		name       string
		self, peer *End
	}{{"a", a, b}, {"b", b, a}} {
		for i := 0; i < perSide; i++ {
			wg.Add(2)
			go func() {
				defer wg.Done()
				var got string
				if err := side.self.Conn.Call(ctx, "echo", EchoParams{From: side.name, N: i}, &got); err != nil {
					errs <- err
					return
				}
				peerName := "b"
				if side.name == "b" {
					peerName = "a"
				}
				if want := fmt.Sprintf("%s:%s:%d", peerName, side.name, i); got != want {
					errs <- fmt.Errorf("echo: got %q, want %q", got, want)
				}
			}()
			go func() {
				defer wg.Done()
				var got string
				if err := side.self.Conn.Call(ctx, "nested", EchoParams{From: side.name, N: i}, &got); err != nil {
					errs <- err
					return
				}
				peerName := "b"
				if side.name == "b" {
					peerName = "a"
				}
				// The peer called us back; our handler answered.
				if want := fmt.Sprintf("%s:%s-nested:%d", side.name, peerName, i); got != want {
					errs <- fmt.Errorf("nested: got %q, want %q", got, want)
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// cancelSendsCancelRequestAndDropsLateResponse: a caller that gives up sends
// $/cancelRequest (the peer's handler sees its ctx cancelled), and the answer the
// handler sends afterwards is dropped without disturbing later calls.
func cancelSendsCancelRequestAndDropsLateResponse(t *testing.T, setup Setup) {
	started := make(chan struct{})
	sawCancel := make(chan error, 1)
	hb := func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		switch method {
		case "slow":
			close(started)
			select {
			case <-ctx.Done():
				sawCancel <- ctx.Err()
			case <-time.After(Guard):
				sawCancel <- errors.New("handler ctx was never cancelled")
			}
			return "late answer", nil
		case "echo":
			var p EchoParams
			_ = json.Unmarshal(params, &p)
			return p.N, nil
		}
		return nil, protocol.Errorf(protocol.CodeMethodNotFound, "no %s", method)
	}
	a, b := Pair(t, setup, nil, hb, protocol.ConnOptions{})

	ctx, cancel := context.WithCancel(context.Background())
	callErr := make(chan error, 1)
	go func() {
		var s string
		callErr <- a.Conn.Call(ctx, "slow", nil, &s)
	}()
	select {
	case <-started:
	case <-time.After(Guard):
		t.Fatal("the slow handler never started")
	}
	cancel()
	select {
	case err := <-callErr:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled call returned %v, want context.Canceled", err)
		}
	case <-time.After(Guard):
		t.Fatal("cancelled call did not return")
	}
	select {
	case err := <-sawCancel:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("peer handler: %v", err)
		}
	case <-time.After(Guard):
		t.Fatal("peer handler never returned")
	}
	select {
	case <-b.Conn.Done():
		t.Fatal("the handler was cancelled because the peer connection stopped, not by $/cancelRequest")
	default:
	}
	// The late answer is on its way (or already dropped); later calls get their own.
	cctx, ccancel := context.WithTimeout(context.Background(), Guard)
	defer ccancel()
	for i := 1; i <= 20; i++ {
		var n int
		if err := a.Conn.Call(cctx, "echo", EchoParams{N: i}, &n); err != nil {
			t.Fatalf("call after cancellation: %v", err)
		}
		if n != i {
			t.Fatalf("call %d got %d: a late response reached the wrong caller", i, n)
		}
	}
	select {
	case <-a.Conn.Done():
		t.Fatalf("the late response stopped the connection: %v", a.Conn.Err())
	default:
	}
}

// deadlineSendsCancel: a call whose deadline passes returns
// context.DeadlineExceeded; the handler is told through $/cancelRequest.
func deadlineSendsCancel(t *testing.T, setup Setup) {
	cancelled := make(chan struct{})
	hb := func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		<-ctx.Done()
		close(cancelled)
		return nil, ctx.Err()
	}
	a, _ := Pair(t, setup, nil, hb, protocol.ConnOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := a.Conn.Call(ctx, "hang", nil, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want context.DeadlineExceeded", err)
	}
	select {
	case <-cancelled:
	case <-time.After(Guard):
		t.Fatal("the peer's handler was never cancelled")
	}
}

// malformedInputStopsConn: garbage on the stream stops the connection with
// an error naming the problem, and a call in flight fails with ErrClosed.
func malformedInputStopsConn(t *testing.T, setup Setup) {
	cases := []struct{ name, line, want string }{
		{"not json", "not json\n", "malformed protocol message"},
		{"not jsonrpc 2.0", `{"jsonrpc":"1.0","id":1,"result":1}` + "\n", "without jsonrpc 2.0"},
		{"neither request nor response", `{"jsonrpc":"2.0"}` + "\n", "neither request nor response"},
		{"response id not ours", `{"jsonrpc":"2.0","id":"x","result":1}` + "\n", "unknown id"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			conn, feed, ran := Raw(t, setup, nil, protocol.ConnOptions{})
			callErr := make(chan error, 1)
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), Guard)
				defer cancel()
				callErr <- conn.Call(ctx, "never-answered", nil, nil)
			}()
			if _, err := io.WriteString(feed, c.line); err != nil {
				t.Fatal(err)
			}
			err := WaitRun(t, ran)
			if err == nil || errors.Is(err, io.EOF) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Run returned %v, want an error containing %q", err, c.want)
			}
			if got := conn.Err(); got == nil || got.Error() != err.Error() {
				t.Fatalf("Err() = %v, want %v", got, err)
			}
			select {
			case err := <-callErr:
				if !errors.Is(err, protocol.ErrClosed) || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("pending call: %v, want ErrClosed naming %q", err, c.want)
				}
			case <-time.After(Guard):
				t.Fatal("pending call did not fail")
			}
			if err := conn.Call(context.Background(), "after", nil, nil); !errors.Is(err, protocol.ErrClosed) {
				t.Fatalf("call on a stopped connection: %v, want ErrClosed", err)
			}
		})
	}
}

// oversizedLine: a line over the cap stops the connection with
// ErrMessageTooLarge, even when the line never ends; lines under the cap are fine.
func oversizedLine(t *testing.T, setup Setup) {
	const max = 4096
	got := make(chan string, 1)
	conn, feed, ran := Raw(t, setup, func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		var s string
		_ = json.Unmarshal(params, &s)
		got <- s
		return nil, nil
	}, protocol.ConnOptions{MaxMessageBytes: max})
	under := strings.Repeat("u", max/2)
	if _, err := fmt.Fprintf(feed, `{"jsonrpc":"2.0","method":"note","params":%q}`+"\n", under); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-got:
		if s != under {
			t.Fatalf("notification under the cap arrived as %d bytes", len(s))
		}
	case <-time.After(Guard):
		t.Fatal("a message under the cap was not delivered")
	}
	go func() {
		// Two caps' worth then a newline; the writer may be cut off by the close.
		_, _ = fmt.Fprintf(feed, `{"jsonrpc":"2.0","method":"note","params":%q}`+"\n", strings.Repeat("o", 2*max))
	}()
	err := WaitRun(t, ran)
	if !errors.Is(err, protocol.ErrMessageTooLarge) {
		t.Fatalf("Run returned %v, want ErrMessageTooLarge", err)
	}
	if !errors.Is(conn.Err(), protocol.ErrMessageTooLarge) {
		t.Fatalf("Err() = %v", conn.Err())
	}
}

// peerCloseFailsPendingCalls: when the peer hangs up, calls in flight fail
// with ErrClosed, later calls fail at once, and Run reports a clean close.
func peerCloseFailsPendingCalls(t *testing.T, setup Setup) {
	started := make(chan struct{}, 8)
	release := make(chan struct{})
	hb := func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil, nil
	}
	a, b := Pair(t, setup, nil, hb, protocol.ConnOptions{})
	defer close(release)
	const n = 3
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		go func() { errs <- a.Conn.Call(context.Background(), "block", nil, nil) }()
	}
	for i := 0; i < n; i++ {
		select {
		case <-started:
		case <-time.After(Guard):
			t.Fatal("handlers did not start")
		}
	}
	b.Out.Close() // b hangs up: a reads EOF
	for i := 0; i < n; i++ {
		select {
		case err := <-errs:
			if !errors.Is(err, protocol.ErrClosed) {
				t.Fatalf("pending call returned %v, want ErrClosed", err)
			}
		case <-time.After(Guard):
			t.Fatal("a pending call did not fail when the peer hung up")
		}
	}
	if err := a.Wait(t); !errors.Is(err, io.EOF) {
		t.Fatalf("Run returned %v, want io.EOF for a clean close", err)
	}
	select {
	case <-a.Conn.Done():
	default:
		t.Fatal("Done is not closed after the peer hung up")
	}
	if err := a.Conn.Call(context.Background(), "later", nil, nil); !errors.Is(err, protocol.ErrClosed) {
		t.Fatalf("call after close: %v, want ErrClosed", err)
	}
	if err := a.Conn.Notify("later", nil); err == nil {
		t.Fatal("Notify on a closed connection succeeded")
	}
}

// closeFailsPendingCallsAndCancelsHandlers: Close stops our side: our calls
// fail and the handlers we are running see their ctx cancelled.
func closeFailsPendingCallsAndCancelsHandlers(t *testing.T, setup Setup) {
	serving := make(chan struct{})
	handlerDone := make(chan error, 1)
	ha := func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		close(serving)
		select {
		case <-ctx.Done():
			handlerDone <- ctx.Err()
		case <-time.After(Guard):
			handlerDone <- errors.New("not cancelled")
		}
		return nil, nil
	}
	hb := func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		<-ctx.Done()
		return nil, nil
	}
	a, b := Pair(t, setup, ha, hb, protocol.ConnOptions{})
	go func() { _ = b.Conn.Call(context.Background(), "to-a", nil, nil) }()
	select {
	case <-serving:
	case <-time.After(Guard):
		t.Fatal("a never served")
	}
	callErr := make(chan error, 1)
	go func() { callErr <- a.Conn.Call(context.Background(), "to-b", nil, nil) }()
	a.Conn.Close()
	select {
	case err := <-callErr:
		if !errors.Is(err, protocol.ErrClosed) {
			t.Fatalf("call: %v, want ErrClosed", err)
		}
	case <-time.After(Guard):
		t.Fatal("call did not fail on Close")
	}
	select {
	case err := <-handlerDone:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("served handler: %v", err)
		}
	case <-time.After(Guard):
		t.Fatal("served handler was not cancelled")
	}
}

// handlerPanicBecomesErrorResponse: a panicking handler answers with
// CodeInternal and the connection keeps serving; a panicking notification handler
// does not take the process down either.
func handlerPanicBecomesErrorResponse(t *testing.T, setup Setup) {
	notified := make(chan struct{}, 1)
	hb := func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		switch method {
		case "boom":
			panic("kaboom")
		case "note-boom":
			defer func() { notified <- struct{}{} }()
			panic("notification kaboom")
		}
		return "fine", nil
	}
	a, _ := Pair(t, setup, nil, hb, protocol.ConnOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), Guard)
	defer cancel()
	err := a.Conn.Call(ctx, "boom", nil, nil)
	var perr *protocol.Error
	if !errors.As(err, &perr) || perr.Code != protocol.CodeInternal || !strings.Contains(perr.Message, "kaboom") {
		t.Fatalf("got %v, want a CodeInternal error naming the panic", err)
	}
	if err := a.Conn.Notify("note-boom", nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-notified:
	case <-time.After(Guard):
		t.Fatal("notification handler never ran")
	}
	var s string
	if err := a.Conn.Call(ctx, "ok", nil, &s); err != nil || s != "fine" {
		t.Fatalf("call after panics: %q, %v", s, err)
	}
}

// outgoingOverCapFailsOnlyThatMessage: a request or response that would be
// over the peer's size cap is not sent (the peer would drop the connection and every
// call with it); that one call fails saying what, how big and the cap, and the
// connection carries on. HTML does not count sixfold.
func outgoingOverCapFailsOnlyThatMessage(t *testing.T, setup Setup) {
	const max = 4096
	echo := func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		if method == "big" {
			return strings.Repeat("r", 2*max), nil
		}
		return params, nil
	}
	a, b := Pair(t, setup, echo, echo, protocol.ConnOptions{MaxMessageBytes: max})
	ctx, cancel := context.WithTimeout(context.Background(), Guard)
	defer cancel()

	// 1000 '<' would be 6000 bytes escaped: over the cap.
	html := strings.Repeat("<", 1000)
	var got json.RawMessage
	if err := a.Conn.Call(ctx, "echo", map[string]string{"s": html}, &got); err != nil {
		t.Fatalf("HTML under the cap: %v", err)
	}
	if !strings.Contains(string(got), html) {
		t.Fatalf("echo came back as %.80s", got)
	}
	for _, params := range []any{
		map[string]string{"s": strings.Repeat("x", max)},
		protocol.RawParams(`{"s":"` + strings.Repeat("x", max) + `"}`),
		protocol.ToolCallParams{Handle: "h", Args: map[string]any{"s": strings.Repeat("x", max)}},
	} {
		err := a.Conn.Call(ctx, "tool.call", params, nil)
		var big *protocol.TooLargeError
		if !errors.As(err, &big) || !errors.Is(err, protocol.ErrMessageTooLarge) {
			t.Fatalf("%T over the cap: %v, want a TooLargeError", params, err)
		}
		for _, want := range []string{"tool.call request", strconv.Itoa(big.Size), "4096"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
		}
	}
	// A handler's result over the cap: the caller gets the reason as an error.
	err := a.Conn.Call(ctx, "big", nil, nil)
	var perr *protocol.Error
	if !errors.As(err, &perr) || !strings.Contains(perr.Message, "response to big is") || !strings.Contains(perr.Message, "4096") {
		t.Fatalf("result over the cap: %v, want an error response saying so", err)
	}
	// Both ends carry on.
	for _, e := range []*End{a, b} {
		if err := e.Conn.Call(ctx, "echo", 1, nil); err != nil {
			t.Fatalf("call after the refused messages: %v", err)
		}
	}
}
