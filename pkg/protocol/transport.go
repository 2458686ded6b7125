package protocol

import (
	"context"
	"encoding/json"
	"io"
	"strconv"

	"github.com/hermes-go/hermes/internal/jsonx"
)

// Transport is how a Conn reads what its peer sends and frames the requests it
// sends. The one NewConn uses by default reads lines on Run's goroutine alone;
// callers wait for their responses on channels. The hermes host supplies its
// own for plugin pipes, where a caller reads its own response; a plugin has no
// reason to.
type Transport interface {
	// Serve reads messages and hands each to deliver, in order, until reading
	// or deliver fails, and returns why; nil once Stop was called. Conn.Run
	// calls it once.
	Serve(deliver func(*Message) error) error
	// Await is called by a call once its request (id) is written. It may read
	// and deliver messages on the caller's goroutine; it returns the response
	// when it has it, nil when it leaves the wait to the Conn (ctx ended, the
	// connection stopped, or it does not read for callers), and a read
	// failure, which stops the connection.
	Await(ctx context.Context, id int64, answer <-chan *Message, deliver func(*Message) error) (*Message, error)
	// AppendRequest appends a request line, newline included, to b.
	AppendRequest(b []byte, id int64, method string, params any) ([]byte, error)
	// Stop is called once, when the connection stops: Serve and Await return
	// as soon as they can.
	Stop()
}

// lineTransport is the default Transport.
type lineTransport struct {
	lines   *LineReader
	stopped chan struct{}
}

func newLineTransport(r io.Reader, max int) *lineTransport {
	return &lineTransport{lines: NewLineReader(r, max), stopped: make(chan struct{})}
}

func (t *lineTransport) Serve(deliver func(*Message) error) error {
	for {
		select {
		case <-t.stopped:
			return nil
		default:
		}
		line, err := t.lines.ReadLine()
		if err != nil {
			return err
		}
		msg, err := DecodeMessage(line)
		if err == nil {
			err = deliver(msg)
		}
		if err != nil {
			return err
		}
	}
}

// Await leaves the wait to the Conn: only Serve reads.
func (t *lineTransport) Await(context.Context, int64, <-chan *Message, func(*Message) error) (*Message, error) {
	return nil, nil
}

func (t *lineTransport) AppendRequest(b []byte, id int64, method string, params any) ([]byte, error) {
	p, ok := params.(RawParams)
	if !ok {
		var err error
		if p, err = jsonx.Marshal(params); err != nil {
			return nil, err
		}
	}
	line, err := EncodeMessage(&Message{JSONRPC: "2.0", ID: strconv.AppendInt(nil, id, 10), Method: method, Params: json.RawMessage(p)})
	if err != nil {
		return nil, err
	}
	return append(b, line...), nil
}

func (t *lineTransport) Stop() { close(t.stopped) }
