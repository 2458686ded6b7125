package protocol_test

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

	"go.uber.org/goleak"

	"github.com/hermes-go/hermes/pkg/protocol"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// guard bounds every wait so a regression fails instead of hanging the suite.
const guard = 10 * time.Second

// transport makes two one-way streams; a Conn reads one and writes the other.
// Pipes from os.Pipe let the Conn read its own responses (read deadlines); io.Pipe
// has no deadlines, so the Conn reads through its background reader only.
type transport struct {
	name string
	make func(t *testing.T) (r io.ReadCloser, w io.WriteCloser)
}

var transports = []transport{
	{"os.Pipe", func(t *testing.T) (io.ReadCloser, io.WriteCloser) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		return r, w
	}},
	{"io.Pipe", func(t *testing.T) (io.ReadCloser, io.WriteCloser) {
		r, w := io.Pipe()
		return r, w
	}},
}

func eachTransport(t *testing.T, f func(t *testing.T, tr transport)) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) { f(t, tr) })
	}
}

// end is one side of a connected pair.
type end struct {
	conn *protocol.Conn
	out  io.WriteCloser // what this side writes; closing it is "this side hangs up"
	in   io.ReadCloser
	ran  chan struct{} // closed when Run returns
	err  error         // Run's result, once ran is closed
}

func (e *end) wait(t *testing.T) error {
	t.Helper()
	select {
	case <-e.ran:
		return e.err
	case <-time.After(guard):
		t.Fatal("Run did not return")
		return nil
	}
}

// pair connects two Conns. Cleanup stops both and waits for their Run loops.
func pair(t *testing.T, tr transport, ha, hb protocol.Handler, opts protocol.ConnOptions) (a, b *end) {
	t.Helper()
	abR, abW := tr.make(t) // a → b
	baR, baW := tr.make(t) // b → a
	a = &end{out: abW, in: baR, ran: make(chan struct{})}
	b = &end{out: baW, in: abR, ran: make(chan struct{})}
	a.conn = protocol.NewConn(baR, abW, ha, opts)
	b.conn = protocol.NewConn(abR, baW, hb, opts)
	for _, e := range []*end{a, b} {
		go func() { e.err = e.conn.Run(); close(e.ran) }()
	}
	t.Cleanup(func() {
		a.conn.Close()
		b.conn.Close()
		for _, c := range []io.Closer{abW, baW, abR, baR} {
			c.Close()
		}
		for _, e := range []*end{a, b} {
			select {
			case <-e.ran:
			case <-time.After(guard):
				t.Errorf("Run did not return after the connection and its pipes were closed")
			}
		}
	})
	return a, b
}

// raw gives a Conn a stream the test writes by hand.
func raw(t *testing.T, tr transport, h protocol.Handler, opts protocol.ConnOptions) (c *protocol.Conn, feed io.WriteCloser, ran chan error) {
	t.Helper()
	inR, inW := tr.make(t)
	outR, outW := tr.make(t)
	go func() { _, _ = io.Copy(io.Discard, outR) }()
	c = protocol.NewConn(inR, outW, h, opts)
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

func waitRun(t *testing.T, ran chan error) error {
	t.Helper()
	select {
	case err := <-ran:
		return err
	case <-time.After(guard):
		t.Fatal("Run did not return")
		return nil
	}
}

type echoParams struct {
	From string `json:"from"`
	N    int    `json:"n"`
}

// TestConnConcurrentCallsBothDirections runs many calls at once from both sides, some
// of them calling back into the caller from inside the handler, and checks that every
// caller gets its own answer.
func TestConnConcurrentCallsBothDirections(t *testing.T) {
	eachTransport(t, func(t *testing.T, tr transport) {
		var a, b *end
		handler := func(self string) protocol.Handler {
			return func(ctx context.Context, method string, params json.RawMessage) (any, error) {
				var p echoParams
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
					if err := own.conn.Call(ctx, "echo", echoParams{From: self + "-nested", N: p.N}, &inner); err != nil {
						return nil, err
					}
					return inner, nil
				}
				return nil, protocol.Errorf(protocol.CodeMethodNotFound, "no %s", method)
			}
		}
		a, b = pair(t, tr, handler("a"), handler("b"), protocol.ConnOptions{})

		ctx, cancel := context.WithTimeout(context.Background(), guard)
		defer cancel()
		const perSide = 40
		var wg sync.WaitGroup
		errs := make(chan error, 4*perSide)
		for _, side := range []struct {
			name       string
			self, peer *end
		}{{"a", a, b}, {"b", b, a}} {
			for i := 0; i < perSide; i++ {
				wg.Add(2)
				go func() {
					defer wg.Done()
					var got string
					if err := side.self.conn.Call(ctx, "echo", echoParams{From: side.name, N: i}, &got); err != nil {
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
					if err := side.self.conn.Call(ctx, "nested", echoParams{From: side.name, N: i}, &got); err != nil {
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
	})
}

// TestConnCancelSendsCancelRequestAndDropsLateResponse: a caller that gives up sends
// $/cancelRequest (the peer's handler sees its ctx cancelled), and the answer the
// handler sends afterwards is dropped without disturbing later calls.
func TestConnCancelSendsCancelRequestAndDropsLateResponse(t *testing.T) {
	eachTransport(t, func(t *testing.T, tr transport) {
		started := make(chan struct{})
		sawCancel := make(chan error, 1)
		hb := func(ctx context.Context, method string, params json.RawMessage) (any, error) {
			switch method {
			case "slow":
				close(started)
				select {
				case <-ctx.Done():
					sawCancel <- ctx.Err()
				case <-time.After(guard):
					sawCancel <- errors.New("handler ctx was never cancelled")
				}
				return "late answer", nil
			case "echo":
				var p echoParams
				_ = json.Unmarshal(params, &p)
				return p.N, nil
			}
			return nil, protocol.Errorf(protocol.CodeMethodNotFound, "no %s", method)
		}
		a, b := pair(t, tr, nil, hb, protocol.ConnOptions{})

		ctx, cancel := context.WithCancel(context.Background())
		callErr := make(chan error, 1)
		go func() {
			var s string
			callErr <- a.conn.Call(ctx, "slow", nil, &s)
		}()
		select {
		case <-started:
		case <-time.After(guard):
			t.Fatal("the slow handler never started")
		}
		cancel()
		select {
		case err := <-callErr:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("cancelled call returned %v, want context.Canceled", err)
			}
		case <-time.After(guard):
			t.Fatal("cancelled call did not return")
		}
		select {
		case err := <-sawCancel:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("peer handler: %v", err)
			}
		case <-time.After(guard):
			t.Fatal("peer handler never returned")
		}
		select {
		case <-b.conn.Done():
			t.Fatal("the handler was cancelled because the peer connection stopped, not by $/cancelRequest")
		default:
		}
		// The late answer is on its way (or already dropped); later calls get their own.
		cctx, ccancel := context.WithTimeout(context.Background(), guard)
		defer ccancel()
		for i := 1; i <= 20; i++ {
			var n int
			if err := a.conn.Call(cctx, "echo", echoParams{N: i}, &n); err != nil {
				t.Fatalf("call after cancellation: %v", err)
			}
			if n != i {
				t.Fatalf("call %d got %d: a late response reached the wrong caller", i, n)
			}
		}
		select {
		case <-a.conn.Done():
			t.Fatalf("the late response stopped the connection: %v", a.conn.Err())
		default:
		}
	})
}

// TestConnDeadlineSendsCancel: a call whose deadline passes returns
// context.DeadlineExceeded; the handler is told through $/cancelRequest.
func TestConnDeadlineSendsCancel(t *testing.T) {
	eachTransport(t, func(t *testing.T, tr transport) {
		cancelled := make(chan struct{})
		hb := func(ctx context.Context, method string, params json.RawMessage) (any, error) {
			<-ctx.Done()
			close(cancelled)
			return nil, ctx.Err()
		}
		a, _ := pair(t, tr, nil, hb, protocol.ConnOptions{})
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		if err := a.conn.Call(ctx, "hang", nil, nil); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v, want context.DeadlineExceeded", err)
		}
		select {
		case <-cancelled:
		case <-time.After(guard):
			t.Fatal("the peer's handler was never cancelled")
		}
	})
}

// TestConnMalformedInputStopsConn: garbage on the stream stops the connection with
// an error naming the problem, and a call in flight fails with ErrClosed.
func TestConnMalformedInputStopsConn(t *testing.T) {
	cases := []struct{ name, line, want string }{
		{"not json", "not json\n", "malformed protocol message"},
		{"not jsonrpc 2.0", `{"jsonrpc":"1.0","id":1,"result":1}` + "\n", "without jsonrpc 2.0"},
		{"neither request nor response", `{"jsonrpc":"2.0"}` + "\n", "neither request nor response"},
		{"response id not ours", `{"jsonrpc":"2.0","id":"x","result":1}` + "\n", "unknown id"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			eachTransport(t, func(t *testing.T, tr transport) {
				conn, feed, ran := raw(t, tr, nil, protocol.ConnOptions{})
				callErr := make(chan error, 1)
				go func() {
					ctx, cancel := context.WithTimeout(context.Background(), guard)
					defer cancel()
					callErr <- conn.Call(ctx, "never-answered", nil, nil)
				}()
				if _, err := io.WriteString(feed, c.line); err != nil {
					t.Fatal(err)
				}
				err := waitRun(t, ran)
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
				case <-time.After(guard):
					t.Fatal("pending call did not fail")
				}
				if err := conn.Call(context.Background(), "after", nil, nil); !errors.Is(err, protocol.ErrClosed) {
					t.Fatalf("call on a stopped connection: %v, want ErrClosed", err)
				}
			})
		})
	}
}

// endless is a peer that never stops sending one line.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

// TestConnOversizedLine: a line over the cap stops the connection with
// ErrMessageTooLarge, even when the line never ends; lines under the cap are fine.
func TestConnOversizedLine(t *testing.T) {
	const max = 4096
	eachTransport(t, func(t *testing.T, tr transport) {
		got := make(chan string, 1)
		conn, feed, ran := raw(t, tr, func(ctx context.Context, method string, params json.RawMessage) (any, error) {
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
		case <-time.After(guard):
			t.Fatal("a message under the cap was not delivered")
		}
		go func() {
			// Two caps' worth then a newline; the writer may be cut off by the close.
			_, _ = fmt.Fprintf(feed, `{"jsonrpc":"2.0","method":"note","params":%q}`+"\n", strings.Repeat("o", 2*max))
		}()
		err := waitRun(t, ran)
		if !errors.Is(err, protocol.ErrMessageTooLarge) {
			t.Fatalf("Run returned %v, want ErrMessageTooLarge", err)
		}
		if !errors.Is(conn.Err(), protocol.ErrMessageTooLarge) {
			t.Fatalf("Err() = %v", conn.Err())
		}
	})

	t.Run("line without end", func(t *testing.T) {
		c := protocol.NewConn(endless{}, io.Discard, nil, protocol.ConnOptions{MaxMessageBytes: max})
		ran := make(chan error, 1)
		go func() { ran <- c.Run() }()
		if err := waitRun(t, ran); !errors.Is(err, protocol.ErrMessageTooLarge) {
			t.Fatalf("Run returned %v, want ErrMessageTooLarge", err)
		}
	})
}

// TestConnPeerCloseFailsPendingCalls: when the peer hangs up, calls in flight fail
// with ErrClosed, later calls fail at once, and Run reports a clean close.
func TestConnPeerCloseFailsPendingCalls(t *testing.T) {
	eachTransport(t, func(t *testing.T, tr transport) {
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
		a, b := pair(t, tr, nil, hb, protocol.ConnOptions{})
		defer close(release)
		const n = 3
		errs := make(chan error, n)
		for i := 0; i < n; i++ {
			go func() { errs <- a.conn.Call(context.Background(), "block", nil, nil) }()
		}
		for i := 0; i < n; i++ {
			select {
			case <-started:
			case <-time.After(guard):
				t.Fatal("handlers did not start")
			}
		}
		b.out.Close() // b hangs up: a reads EOF
		for i := 0; i < n; i++ {
			select {
			case err := <-errs:
				if !errors.Is(err, protocol.ErrClosed) {
					t.Fatalf("pending call returned %v, want ErrClosed", err)
				}
			case <-time.After(guard):
				t.Fatal("a pending call did not fail when the peer hung up")
			}
		}
		if err := a.wait(t); !errors.Is(err, io.EOF) {
			t.Fatalf("Run returned %v, want io.EOF for a clean close", err)
		}
		select {
		case <-a.conn.Done():
		default:
			t.Fatal("Done is not closed after the peer hung up")
		}
		if err := a.conn.Call(context.Background(), "later", nil, nil); !errors.Is(err, protocol.ErrClosed) {
			t.Fatalf("call after close: %v, want ErrClosed", err)
		}
		if err := a.conn.Notify("later", nil); err == nil {
			t.Fatal("Notify on a closed connection succeeded")
		}
	})
}

// TestConnCloseFailsPendingCallsAndCancelsHandlers: Close stops our side: our calls
// fail and the handlers we are running see their ctx cancelled.
func TestConnCloseFailsPendingCallsAndCancelsHandlers(t *testing.T) {
	eachTransport(t, func(t *testing.T, tr transport) {
		serving := make(chan struct{})
		handlerDone := make(chan error, 1)
		ha := func(ctx context.Context, method string, params json.RawMessage) (any, error) {
			close(serving)
			select {
			case <-ctx.Done():
				handlerDone <- ctx.Err()
			case <-time.After(guard):
				handlerDone <- errors.New("not cancelled")
			}
			return nil, nil
		}
		hb := func(ctx context.Context, method string, params json.RawMessage) (any, error) {
			<-ctx.Done()
			return nil, nil
		}
		a, b := pair(t, tr, ha, hb, protocol.ConnOptions{})
		go func() { _ = b.conn.Call(context.Background(), "to-a", nil, nil) }()
		select {
		case <-serving:
		case <-time.After(guard):
			t.Fatal("a never served")
		}
		callErr := make(chan error, 1)
		go func() { callErr <- a.conn.Call(context.Background(), "to-b", nil, nil) }()
		a.conn.Close()
		select {
		case err := <-callErr:
			if !errors.Is(err, protocol.ErrClosed) {
				t.Fatalf("call: %v, want ErrClosed", err)
			}
		case <-time.After(guard):
			t.Fatal("call did not fail on Close")
		}
		select {
		case err := <-handlerDone:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("served handler: %v", err)
			}
		case <-time.After(guard):
			t.Fatal("served handler was not cancelled")
		}
	})
}

// TestConnHandlerPanicBecomesErrorResponse: a panicking handler answers with
// CodeInternal and the connection keeps serving; a panicking notification handler
// does not take the process down either.
func TestConnHandlerPanicBecomesErrorResponse(t *testing.T) {
	eachTransport(t, func(t *testing.T, tr transport) {
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
		a, _ := pair(t, tr, nil, hb, protocol.ConnOptions{})
		ctx, cancel := context.WithTimeout(context.Background(), guard)
		defer cancel()
		err := a.conn.Call(ctx, "boom", nil, nil)
		var perr *protocol.Error
		if !errors.As(err, &perr) || perr.Code != protocol.CodeInternal || !strings.Contains(perr.Message, "kaboom") {
			t.Fatalf("got %v, want a CodeInternal error naming the panic", err)
		}
		if err := a.conn.Notify("note-boom", nil); err != nil {
			t.Fatal(err)
		}
		select {
		case <-notified:
		case <-time.After(guard):
			t.Fatal("notification handler never ran")
		}
		var s string
		if err := a.conn.Call(ctx, "ok", nil, &s); err != nil || s != "fine" {
			t.Fatalf("call after panics: %q, %v", s, err)
		}
	})
}

// TestConnCloseWakesReadersOfAnOpenPipe: on a pipe whose writer stays open (an
// escaped child of a plugin holds it), Close alone must end Run and fail the call
// whose caller is blocked reading the pipe itself; nothing else will ever wake them.
func TestConnCloseWakesReadersOfAnOpenPipe(t *testing.T) {
	for i := range 20 { // the pump's hand-back races Close: repeat to catch it
		inR, inW, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		c := protocol.NewConn(inR, io.Discard, nil, protocol.ConnOptions{})
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

// TestConnOutgoingOverCapFailsOnlyThatMessage: a request or response that would be
// over the peer's size cap is not sent (the peer would drop the connection and every
// call with it); that one call fails saying what, how big and the cap, and the
// connection carries on. HTML does not count sixfold.
func TestConnOutgoingOverCapFailsOnlyThatMessage(t *testing.T) {
	const max = 4096
	eachTransport(t, func(t *testing.T, tr transport) {
		echo := func(ctx context.Context, method string, params json.RawMessage) (any, error) {
			if method == "big" {
				return strings.Repeat("r", 2*max), nil
			}
			return params, nil
		}
		a, b := pair(t, tr, echo, echo, protocol.ConnOptions{MaxMessageBytes: max})
		ctx, cancel := context.WithTimeout(context.Background(), guard)
		defer cancel()

		// 1000 '<' would be 6000 bytes escaped: over the cap.
		html := strings.Repeat("<", 1000)
		var got json.RawMessage
		if err := a.conn.Call(ctx, "echo", map[string]string{"s": html}, &got); err != nil {
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
			err := a.conn.Call(ctx, "tool.call", params, nil)
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
		err := a.conn.Call(ctx, "big", nil, nil)
		var perr *protocol.Error
		if !errors.As(err, &perr) || !strings.Contains(perr.Message, "response to big is") || !strings.Contains(perr.Message, "4096") {
			t.Fatalf("result over the cap: %v, want an error response saying so", err)
		}
		// Both ends carry on.
		for _, e := range []*end{a, b} {
			if err := e.conn.Call(ctx, "echo", 1, nil); err != nil {
				t.Fatalf("call after the refused messages: %v", err)
			}
		}
	})
}
