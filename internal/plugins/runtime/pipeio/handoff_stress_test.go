package pipeio_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/protocoltest"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// TestConnReadTokenHandoffStress drives the read-token hand-off (caller reads its
// own response; the background pump reads after 2 ms of quiet; kicks by read
// deadline; the lone caller's wait on its thread) through its timing edges: calls
// spaced around the pump's grace period, answers that arrive before, during and
// after a caller's on-thread wait, log notifications ahead of answers, calls that
// give up, and several callers at once. Every call must get its own answer: a
// lost response shows up as a call stuck past the protocoltest.Guard.
func TestConnReadTokenHandoffStress(t *testing.T) {
	var notified sync.Map
	host := func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		if method == "log" {
			notified.Store(string(params), true)
		}
		return nil, nil
	}
	var plugin protocoltest.Conn
	pluginHandler := func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		var p protocoltest.EchoParams
		_ = json.Unmarshal(params, &p)
		switch p.N % 7 {
		case 1:
			time.Sleep(150 * time.Microsecond)
		case 2:
			time.Sleep(time.Duration(1500+rand.IntN(1000)) * time.Microsecond) // around the poll(2) wait and the pump's grace
		case 3:
			_ = plugin.Notify("log", map[string]any{"line": p.From})
		case 4:
			time.Sleep(4 * time.Millisecond)
		}
		return p, nil
	}
	a, b := protocoltest.Pair(t, pipes, host, pluginHandler, protocol.ConnOptions{})
	plugin = b.Conn

	const callers, perCaller = 4, 150
	var wg sync.WaitGroup
	errs := make(chan error, callers*perCaller)
	for c := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perCaller {
				n := c*perCaller + i
				switch rand.IntN(4) {
				case 0:
					time.Sleep(time.Duration(1800+rand.IntN(500)) * time.Microsecond) // the pump takes over about now
				case 1:
					time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
				}
				ctx, cancel := context.WithTimeout(context.Background(), protocoltest.Guard)
				if n%23 == 0 {
					cancel()
					ctx, cancel = context.WithTimeout(context.Background(), time.Duration(rand.IntN(3000))*time.Microsecond)
				}
				var got protocoltest.EchoParams
				err := a.Conn.Call(ctx, "echo", protocoltest.EchoParams{From: fmt.Sprint("c", c), N: n}, &got)
				gaveUp := n%23 == 0 && errors.Is(err, context.DeadlineExceeded)
				cancel()
				switch {
				case gaveUp:
				case err != nil:
					errs <- fmt.Errorf("call %d: %w", n, err)
				case got.N != n:
					errs <- fmt.Errorf("call %d got the answer of call %d", n, got.N)
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * protocoltest.Guard):
		t.Fatal("calls still waiting after the protocoltest.Guard: a response was lost")
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
