// Package pipeio is the hermes host's side of a plugin's protocol pipes: a
// protocol.Conn whose Transport lets the goroutine waiting for a response read
// it from the pipe itself, waits for it on its own thread with poll(2) while
// it is the only call waiting, decodes the common response and encodes tool
// calls without encoding/json. A tool call's round trip is tens of µs, and each
// of these saves a share of it; none is worth its complexity in a plugin,
// which is why pkg/protocol does without them.
package pipeio

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/hermes-go/hermes/pkg/protocol"
)

// Conn is a protocol connection to a plugin process.
type Conn struct {
	*protocol.Conn
}

// NewConn connects to a plugin that writes its messages to r (the read end of a
// pipe) and reads them from w. opts.Transport is set here. On a file without
// read deadlines (not a pipe) the default transport reads instead.
func NewConn(r *os.File, w io.Writer, h protocol.Handler, opts protocol.ConnOptions) *Conn {
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = protocol.DefaultMaxMessageBytes
	}
	opts.Transport = nil
	if t := NewTransport(r, opts.MaxMessageBytes); t != nil {
		opts.Transport = t
	}
	return &Conn{protocol.NewConn(r, w, h, opts)}
}

// Call is protocol.Conn.Call, with a string result (what a tool returns)
// decoded without the reflective decoder when it can be.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	s, ok := result.(*string)
	if !ok {
		return c.Conn.Call(ctx, method, params, result)
	}
	raw, err := c.CallRaw(ctx, method, params)
	if err != nil || len(raw) == 0 {
		return err
	}
	if v, ok := plainJSONString(raw); ok {
		*s = v
		return nil
	}
	if err := json.Unmarshal(raw, s); err != nil {
		return fmt.Errorf("decode %s result: %w", method, err)
	}
	return nil
}
