package protocol_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/hermes-go/hermes/internal/protocoltest"
	"github.com/hermes-go/hermes/pkg/protocol"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newConn(r io.Reader, w io.Writer, h protocol.Handler, opts protocol.ConnOptions) protocoltest.Conn {
	return protocol.NewConn(r, w, h, opts)
}

// TestConn runs the behaviour every Conn must have on the default transport,
// over real pipes and over io.Pipe.
func TestConn(t *testing.T) {
	protocoltest.Run(t,
		protocoltest.Setup{Name: "os.Pipe", Stream: protocoltest.OSPipe, NewConn: newConn},
		protocoltest.Setup{Name: "io.Pipe", Stream: protocoltest.IOPipe, NewConn: newConn},
	)
}

// endless is a peer that never stops sending one line.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

// TestConnOversizedLineWithoutEnd: a line over the cap stops the connection
// with ErrMessageTooLarge even when it never ends.
func TestConnOversizedLineWithoutEnd(t *testing.T) {
	c := protocol.NewConn(endless{}, io.Discard, nil, protocol.ConnOptions{MaxMessageBytes: 4096})
	ran := make(chan error, 1)
	go func() { ran <- c.Run() }()
	if err := protocoltest.WaitRun(t, ran); !errors.Is(err, protocol.ErrMessageTooLarge) {
		t.Fatalf("Run returned %v, want ErrMessageTooLarge", err)
	}
}

// TestConnState: without a transport of its own to report, State tells the
// calls waiting and whether the connection stopped.
func TestConnState(t *testing.T) {
	inR, inW := io.Pipe()
	defer inW.Close()
	c := protocol.NewConn(inR, io.Discard, nil, protocol.ConnOptions{})
	ran := make(chan error, 1)
	go func() { ran <- c.Run() }()
	called := make(chan error, 1)
	go func() { called <- c.Call(context.Background(), "never", nil, nil) }()
	deadline := time.Now().Add(protocoltest.Guard)
	for c.State() != "pending ids=[1], stopped=false" {
		if time.Now().After(deadline) {
			t.Fatalf("State() = %q, want the call pending", c.State())
		}
		time.Sleep(time.Millisecond)
	}
	c.Close()
	if err := <-called; !errors.Is(err, protocol.ErrClosed) {
		t.Fatalf("call: %v, want ErrClosed", err)
	}
	if got := c.State(); got != "pending ids=[], stopped=true" {
		t.Fatalf("after Close: State() = %q", got)
	}
	inW.Close() // Close does not interrupt a plain read: the stream's end does
	if err := protocoltest.WaitRun(t, ran); !errors.Is(err, io.EOF) {
		t.Fatalf("Run returned %v, want io.EOF (Close)", err)
	}
	if err := c.Run(); !errors.Is(err, io.EOF) {
		t.Fatalf("Run after Close returned %v", err)
	}
}

// fakeTransport answers every call itself, from Await, as a transport that
// reads for its callers does.
type fakeTransport struct {
	stopped chan struct{}
	written []string
}

func (f *fakeTransport) Serve(func(*protocol.Message) error) error {
	<-f.stopped
	return nil
}

func (f *fakeTransport) Await(_ context.Context, id int64, _ <-chan *protocol.Message, _ func(*protocol.Message) error) (*protocol.Message, error) {
	if id == 2 {
		return nil, errors.New("pipe broke")
	}
	return &protocol.Message{JSONRPC: "2.0", Result: []byte(`"from the transport"`)}, nil
}

func (f *fakeTransport) AppendRequest(b []byte, id int64, method string, params any) ([]byte, error) {
	f.written = append(f.written, method)
	return append(b, "request\n"...), nil
}

func (f *fakeTransport) Stop() { close(f.stopped) }

// TestConnTransport: a Transport given in the options frames the requests and
// may answer calls itself; a read failure it reports stops the connection.
func TestConnTransport(t *testing.T) {
	var sent strings.Builder
	ft := &fakeTransport{stopped: make(chan struct{})}
	c := protocol.NewConn(nil, &sent, nil, protocol.ConnOptions{Transport: ft})
	ran := make(chan error, 1)
	go func() { ran <- c.Run() }()
	var got string
	if err := c.Call(context.Background(), "first", nil, &got); err != nil || got != "from the transport" {
		t.Fatalf("Call = %q, %v", got, err)
	}
	err := c.Call(context.Background(), "second", nil, nil)
	if !errors.Is(err, protocol.ErrClosed) || !strings.Contains(err.Error(), "pipe broke") {
		t.Fatalf("call whose read failed: %v, want ErrClosed naming the failure", err)
	}
	if err := protocoltest.WaitRun(t, ran); err == nil || err.Error() != "pipe broke" {
		t.Fatalf("Run returned %v, want the transport's read failure", err)
	}
	if sent.String() != "request\nrequest\n" || strings.Join(ft.written, ",") != "first,second" {
		t.Fatalf("wrote %q for %v", sent.String(), ft.written)
	}
}
