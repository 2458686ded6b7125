package pipeio

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/hermes-go/hermes/pkg/protocol"
)

// answeringWriter is the peer of a Conn under test: when the Conn writes its
// first request, it answers at once (before the caller can kick the background
// reader), as a plugin on another CPU may do under load. Later writes (a cancel
// notification) are dropped.
type answeringWriter struct {
	once      sync.Once
	onRequest func()
}

func (w *answeringWriter) Write(b []byte) (int, error) {
	w.once.Do(w.onRequest)
	return len(b), nil
}

// waitFor polls cond for up to d.
func waitFor(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(50 * time.Microsecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// heldTransport lets the test hold up the delivery of what the background
// reader read, as a slow dispatch (one waiting for the Conn's lock) would.
type heldTransport struct {
	*Transport
	hold sync.Mutex
}

func (h *heldTransport) Serve(deliver func(*protocol.Message) error) error {
	return h.Transport.Serve(func(m *protocol.Message) error {
		h.hold.Lock()
		defer h.hold.Unlock()
		return deliver(m)
	})
}

// The background reader reads a caller's answer (it arrived before the caller's
// kick) and is slow to hand it over (here: held up on its way to the Conn). The
// caller must not take the read token in that gap and block reading the pipe for
// an answer that has already been read: nothing else arrives to wake it, and it
// would wait until its context ends (forever without a deadline).
func TestPumpDeliversAnswerBeforeReleasingToken(t *testing.T) {
	fromPeer, peerOut, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer fromPeer.Close()
	defer peerOut.Close()

	tr := NewTransport(fromPeer, protocol.DefaultMaxMessageBytes)
	if tr == nil {
		t.Skip("no read deadlines on this platform's pipes")
	}
	held := &heldTransport{Transport: tr}
	w := &answeringWriter{}
	c := protocol.NewConn(fromPeer, w, nil, protocol.ConnOptions{Transport: held})
	ran := make(chan error, 1)
	go func() { ran <- c.Run() }()
	defer func() {
		c.Close()
		<-ran
	}()

	// Before any call the connection is quiet: the background reader reads.
	if !waitFor(5*time.Second, func() bool { return tr.reader.Load() == readerPump }) {
		t.Fatal("the background reader never started reading")
	}

	unlocked := make(chan struct{})
	w.onRequest = func() {
		// Hold up the reader's delivery of the answer, then answer.
		held.hold.Lock()
		read := tr.msgsRead.Load()
		if _, err := peerOut.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":"ok"}` + "\n")); err != nil {
			t.Error(err)
		}
		if !waitFor(5*time.Second, func() bool { return tr.msgsRead.Load() > read }) {
			t.Error("the background reader did not read the answer")
		}
		// Give the reader time to let go of the token (it must not before the
		// answer is delivered), and the caller time to take it and start reading.
		go func() {
			defer close(unlocked)
			waitFor(200*time.Millisecond, func() bool { return tr.reader.Load() == readerCaller })
			time.Sleep(5 * time.Millisecond)
			held.hold.Unlock()
		}()
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	start := time.Now()
	var got string
	err = c.Call(ctx, "m", nil, &got)
	<-unlocked
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("the call waited %v (until its context ended, err %v): its answer was read by the background reader and the caller then waited on the pipe", d.Round(time.Millisecond), err)
	}
	if err != nil || got != "ok" {
		t.Fatalf("Call = %q, %v; want ok", got, err)
	}
}
