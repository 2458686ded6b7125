package protocol

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
)

// ErrMessageTooLarge is returned when a peer sends a line longer than the cap.
var ErrMessageTooLarge = errors.New("protocol message exceeds the size cap")

// ErrClosed is returned by calls on a connection that has stopped.
var ErrClosed = errors.New("protocol connection closed")

// Handler serves one incoming request or notification. For a notification the result
// is discarded. Returning an *Error sends that error; any other error is sent as
// CodeInternal. ctx is cancelled when the peer sends MethodCancel for this request or
// the connection stops.
type Handler func(ctx context.Context, method string, params json.RawMessage) (any, error)

// ConnOptions tune a Conn.
type ConnOptions struct {
	// MaxMessageBytes caps one incoming line (default DefaultMaxMessageBytes).
	MaxMessageBytes int
}

// Conn is a symmetric JSON-RPC 2.0 connection over newline-delimited JSON: both sides
// can call and serve at the same time, with any number of calls in flight.
type Conn struct {
	r       io.Reader
	w       io.Writer
	handler Handler
	max     int

	writeMu sync.Mutex

	mu       sync.Mutex
	nextID   int64
	pending  map[int64]chan *Message
	serving  map[string]context.CancelFunc // incoming request id → cancel
	stopped  bool
	stopErr  error
	done     chan struct{}
	baseCtx  context.Context
	baseStop context.CancelFunc
}

// NewConn wraps a reader and writer. Call Run to start reading.
func NewConn(r io.Reader, w io.Writer, h Handler, opts ConnOptions) *Conn {
	max := opts.MaxMessageBytes
	if max <= 0 {
		max = DefaultMaxMessageBytes
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Conn{
		r: r, w: w, handler: h, max: max,
		pending:  map[int64]chan *Message{},
		serving:  map[string]context.CancelFunc{},
		done:     make(chan struct{}),
		baseCtx:  ctx,
		baseStop: cancel,
	}
}

// Done is closed when the connection stops.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err reports why the connection stopped (io.EOF for a clean close by the peer).
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stopErr
}

// Run reads messages until the peer closes the stream, a malformed or oversized
// message arrives, or Close is called. It returns the reason; io.EOF means a clean close.
func (c *Conn) Run() error {
	br := bufio.NewReaderSize(c.r, 64<<10)
	var err error
	for {
		var line []byte
		line, err = readLine(br, c.max)
		if err != nil {
			break
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var msg Message
		if uerr := json.Unmarshal(line, &msg); uerr != nil {
			err = fmt.Errorf("malformed protocol message %q: %w", truncate(line, 120), uerr)
			break
		}
		if msg.JSONRPC != "2.0" {
			err = fmt.Errorf("protocol message without jsonrpc 2.0: %q", truncate(line, 120))
			break
		}
		if herr := c.dispatch(&msg); herr != nil {
			err = herr
			break
		}
	}
	c.stop(err)
	return err
}

func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(buf)+len(chunk) > max+1 {
			return nil, fmt.Errorf("%w (%d bytes)", ErrMessageTooLarge, max)
		}
		if err == nil {
			if buf == nil {
				return chunk, nil
			}
			return append(buf, chunk...), nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			buf = append(buf, chunk...)
			continue
		}
		if errors.Is(err, io.EOF) && len(buf)+len(chunk) > 0 {
			return append(buf, chunk...), nil
		}
		return nil, err
	}
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

func (c *Conn) dispatch(msg *Message) error {
	switch {
	case msg.Method != "" && len(msg.ID) == 0: // notification
		if msg.Method == MethodCancel {
			var p CancelParams
			if json.Unmarshal(msg.Params, &p) == nil {
				c.mu.Lock()
				cancel := c.serving[string(p.ID)]
				c.mu.Unlock()
				if cancel != nil {
					cancel()
				}
			}
			return nil
		}
		go func() { _, _ = c.handler(c.baseCtx, msg.Method, msg.Params) }()
		return nil
	case msg.Method != "": // request
		ctx, cancel := context.WithCancel(c.baseCtx)
		key := string(msg.ID)
		c.mu.Lock()
		c.serving[key] = cancel
		c.mu.Unlock()
		go func() {
			defer func() {
				c.mu.Lock()
				delete(c.serving, key)
				c.mu.Unlock()
				cancel()
			}()
			res, err := c.safeHandle(ctx, msg.Method, msg.Params)
			c.respond(msg.ID, res, err)
		}()
		return nil
	case len(msg.ID) > 0: // response
		id, err := strconv.ParseInt(string(msg.ID), 10, 64)
		if err != nil {
			return fmt.Errorf("response with unknown id %s", msg.ID)
		}
		c.mu.Lock()
		ch := c.pending[id]
		delete(c.pending, id)
		c.mu.Unlock()
		if ch != nil {
			ch <- msg
		}
		// A late response to a call we gave up on is dropped.
		return nil
	default:
		return errors.New("protocol message is neither request nor response")
	}
}

func (c *Conn) safeHandle(ctx context.Context, method string, params json.RawMessage) (res any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = Errorf(CodeInternal, "handler for %s panicked: %v", method, r)
		}
	}()
	return c.handler(ctx, method, params)
}

func (c *Conn) respond(id json.RawMessage, res any, err error) {
	msg := Message{JSONRPC: "2.0", ID: id}
	if err != nil {
		var perr *Error
		if errors.As(err, &perr) {
			msg.Error = perr
		} else {
			msg.Error = &Error{Code: CodeInternal, Message: err.Error()}
		}
	} else {
		b, merr := json.Marshal(res)
		if merr != nil {
			msg.Error = &Error{Code: CodeInternal, Message: "encode result: " + merr.Error()}
		} else {
			msg.Result = b
		}
	}
	_ = c.write(&msg)
}

func (c *Conn) write(msg *Message) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	select {
	case <-c.done:
		return ErrClosed
	default:
	}
	_, err = c.w.Write(b)
	return err
}

// Call sends a request and waits for its response, decoding the result into result
// (which may be nil). If ctx ends first, a cancel notification is sent to the peer and
// ctx's error is returned.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	raw, err := c.CallRaw(ctx, method, params)
	if err != nil {
		return err
	}
	if result != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, result); err != nil {
			return fmt.Errorf("decode %s result: %w", method, err)
		}
	}
	return nil
}

// CallRaw is Call returning the undecoded result.
func (c *Conn) CallRaw(ctx context.Context, method string, params any) (json.RawMessage, error) {
	p, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("encode %s params: %w", method, err)
	}
	ch := make(chan *Message, 1)
	c.mu.Lock()
	if c.stopped {
		err := c.stopErr
		c.mu.Unlock()
		return nil, closedErr(err)
	}
	c.nextID++
	id := c.nextID
	c.pending[id] = ch
	c.mu.Unlock()
	idRaw := json.RawMessage(strconv.FormatInt(id, 10))
	if err := c.write(&Message{JSONRPC: "2.0", ID: idRaw, Method: method, Params: p}); err != nil {
		c.forget(id)
		return nil, fmt.Errorf("send %s: %w", method, err)
	}
	select {
	case msg := <-ch:
		if msg == nil {
			return nil, closedErr(c.Err())
		}
		if msg.Error != nil {
			return nil, msg.Error
		}
		return msg.Result, nil
	case <-ctx.Done():
		c.forget(id)
		_ = c.Notify(MethodCancel, CancelParams{ID: idRaw})
		return nil, ctx.Err()
	case <-c.done:
		// The response may have raced the stop.
		select {
		case msg := <-ch:
			if msg != nil && msg.Error == nil {
				return msg.Result, nil
			}
			if msg != nil {
				return nil, msg.Error
			}
		default:
		}
		return nil, closedErr(c.Err())
	}
}

func closedErr(cause error) error {
	if cause == nil || errors.Is(cause, io.EOF) {
		return ErrClosed
	}
	return fmt.Errorf("%w: %w", ErrClosed, cause)
}

func (c *Conn) forget(id int64) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// Notify sends a notification (no response expected).
func (c *Conn) Notify(method string, params any) error {
	p, err := json.Marshal(params)
	if err != nil {
		return err
	}
	return c.write(&Message{JSONRPC: "2.0", Method: method, Params: p})
}

// Close stops the connection: pending calls fail with ErrClosed and served requests
// see their context cancelled. It does not close the underlying reader or writer.
func (c *Conn) Close() error {
	c.stop(nil)
	return nil
}

func (c *Conn) stop(err error) {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return
	}
	c.stopped = true
	if err == nil {
		err = io.EOF
	}
	c.stopErr = err
	pending := c.pending
	c.pending = map[int64]chan *Message{}
	c.mu.Unlock()
	c.writeMu.Lock()
	close(c.done)
	c.writeMu.Unlock()
	c.baseStop()
	for _, ch := range pending {
		close(ch)
	}
}
