package protocol

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"sync"

	"github.com/hermes-go/hermes/internal/jsonx"
)

// ErrClosed is returned by calls on a connection that has stopped.
var ErrClosed = errors.New("protocol connection closed")

// Handler serves one incoming request or notification. For a notification the result
// is discarded. Returning an *Error sends that error; any other error is sent as
// CodeInternal. ctx is cancelled when the peer sends MethodCancel for this request or
// the connection stops.
type Handler func(ctx context.Context, method string, params json.RawMessage) (any, error)

// ConnOptions tune a Conn.
type ConnOptions struct {
	// MaxMessageBytes caps one incoming line (default DefaultMaxMessageBytes);
	// outgoing messages over it are refused with a TooLargeError.
	MaxMessageBytes int
	// Transport, when set, reads the peer's messages and frames requests in
	// place of the default line reader over NewConn's reader, which is then not
	// used. Plugins leave it nil.
	Transport Transport
}

// Conn is a symmetric JSON-RPC 2.0 connection over newline-delimited JSON: both sides
// can call and serve at the same time, with any number of calls in flight. Run reads
// the peer's messages: responses go to the call waiting for them, requests are served
// each on its own goroutine, notifications in order on the reader.
type Conn struct {
	w       io.Writer
	handler Handler
	max     int
	t       Transport
	deliver func(*Message) error // c.dispatch, bound once: every call passes it on

	writeMu sync.Mutex

	mu       sync.Mutex
	nextID   int64
	pending  map[int64]chan *Message       // our calls waiting for a response
	serving  map[string]context.CancelFunc // incoming request id → cancel
	stopped  bool
	stopErr  error
	done     chan struct{}
	baseCtx  context.Context
	baseStop context.CancelFunc
}

// NewConn wraps a reader and writer. Call Run to start serving.
func NewConn(r io.Reader, w io.Writer, h Handler, opts ConnOptions) *Conn {
	max := opts.MaxMessageBytes
	if max <= 0 {
		max = DefaultMaxMessageBytes
	}
	t := opts.Transport
	if t == nil {
		t = newLineTransport(r, max)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Conn{
		w: w, handler: h, max: max, t: t,
		pending:  map[int64]chan *Message{},
		serving:  map[string]context.CancelFunc{},
		done:     make(chan struct{}),
		baseCtx:  ctx,
		baseStop: cancel,
	}
	c.deliver = c.dispatch
	return c
}

// Run serves the connection until the peer closes the stream, a malformed or
// oversized message arrives, or Close is called, and returns the reason (io.EOF for
// a clean close).
func (c *Conn) Run() error {
	if err := c.t.Serve(c.deliver); err != nil {
		c.stop(err)
	}
	return c.Err()
}

// Done is closed when the connection stops.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err reports why the connection stopped (io.EOF for a clean close by the peer).
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stopErr
}

// State describes the connection for a stall report: what its transport tells
// of itself (when it is a fmt.Stringer), the calls waiting for a response, and
// whether it stopped. Safe to call at any time.
func (c *Conn) State() string {
	c.mu.Lock()
	pending := make([]int64, 0, len(c.pending))
	for id := range c.pending {
		pending = append(pending, id)
	}
	stopped := c.stopped
	c.mu.Unlock()
	slices.Sort(pending)
	s := fmt.Sprintf("pending ids=%v, stopped=%v", pending, stopped)
	if st, ok := c.t.(fmt.Stringer); ok {
		s = st.String() + ", " + s
	}
	return s
}

// dispatch handles one message from the peer.
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
		// Handled in order, on the reader: a plugin's log line written before its
		// answer must be recorded before the caller sees the answer (and perhaps
		// exits). Notification handlers only record; they never call back.
		if c.handler != nil {
			_, _ = c.safeHandle(c.baseCtx, msg.Method, msg.Params)
		}
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
			if c.handler == nil {
				c.respond(msg.ID, msg.Method, nil, Errorf(CodeMethodNotFound, "no handler for %s", msg.Method))
				return
			}
			res, err := c.safeHandle(ctx, msg.Method, msg.Params)
			c.respond(msg.ID, msg.Method, res, err)
		}()
		// Let the handler run now, on this thread: a new goroutine otherwise waits
		// for an idle thread to wake (~100 µs on a small VM, half a call-back's
		// cost), while this reader would only go back to waiting on the pipe.
		runtime.Gosched()
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

func (c *Conn) respond(id json.RawMessage, method string, res any, err error) {
	msg := Message{JSONRPC: "2.0", ID: id}
	if err != nil {
		var perr *Error
		if errors.As(err, &perr) {
			msg.Error = perr
		} else {
			msg.Error = &Error{Code: CodeInternal, Message: err.Error()}
		}
	} else {
		b, merr := jsonx.Marshal(res)
		if merr != nil {
			msg.Error = &Error{Code: CodeInternal, Message: "encode result: " + merr.Error()}
		} else {
			msg.Result = b
		}
	}
	werr := c.write(&msg, "response to "+method)
	var big *TooLargeError
	if errors.As(werr, &big) {
		// The caller still gets an answer: the reason, not the connection's end.
		msg.Result, msg.Error = nil, &Error{Code: CodeInternal, Message: werr.Error()}
		_ = c.write(&msg, "response to "+method)
	}
}

// write sends one message; what names it in a TooLargeError.
func (c *Conn) write(msg *Message, what string) error {
	b, err := EncodeMessage(msg)
	if err != nil {
		return err
	}
	if len(b) > c.max {
		return &TooLargeError{What: what, Size: len(b), Max: c.max}
	}
	return c.writeBytes(b)
}

func (c *Conn) writeBytes(b []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	select {
	case <-c.done:
		return ErrClosed
	default:
	}
	_, err := c.w.Write(b)
	return err
}

var framePool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// writeRequest frames and sends one request. An error that leaves the
// connection as it was (params that cannot be encoded, a line over the cap) is
// returned as it is: nothing was sent.
func (c *Conn) writeRequest(id int64, method string, params any) error {
	bp := framePool.Get().(*[]byte)
	b, err := c.t.AppendRequest((*bp)[:0], id, method, params)
	switch {
	case err != nil:
		b = *bp
		err = fmt.Errorf("encode %s params: %w", method, err)
	case len(b) > c.max:
		// The peer would drop the connection over it (and every call with it).
		err = &TooLargeError{What: method + " request", Size: len(b), Max: c.max}
	default:
		if werr := c.writeBytes(b); errors.Is(werr, ErrClosed) {
			err = closedErr(c.Err())
		} else if werr != nil {
			err = fmt.Errorf("send %s: %w", method, werr)
		}
	}
	if cap(b) <= 64<<10 { // do not pin a big request's buffer in the pool
		*bp = b[:0]
		framePool.Put(bp)
	}
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
	if result == nil || len(raw) == 0 {
		return nil
	}
	if r, ok := result.(*json.RawMessage); ok {
		*r = raw // already validated when the message was read
		return nil
	}
	if err := json.Unmarshal(raw, result); err != nil {
		return fmt.Errorf("decode %s result: %w", method, err)
	}
	return nil
}

// CallRaw is Call returning the undecoded result. RawParams are sent as they are.
func (c *Conn) CallRaw(ctx context.Context, method string, params any) (json.RawMessage, error) {
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

	if err := c.writeRequest(id, method, params); err != nil {
		c.forget(id)
		return nil, err
	}
	msg, err := c.t.Await(ctx, id, ch, c.deliver)
	if err != nil {
		c.stop(err)
	}
	if msg != nil {
		return c.result(msg)
	}
	select {
	case msg := <-ch:
		return c.result(msg)
	case <-ctx.Done():
		c.forget(id)
		// Best effort and in the background: the peer may have stopped reading.
		idRaw := json.RawMessage(strconv.FormatInt(id, 10))
		go func() { _ = c.Notify(MethodCancel, CancelParams{ID: idRaw}) }()
		return nil, ctx.Err()
	case <-c.done:
		// The response may have raced the stop.
		select {
		case msg := <-ch:
			return c.result(msg)
		default:
		}
		return nil, closedErr(c.Err())
	}
}

func (c *Conn) result(msg *Message) (json.RawMessage, error) {
	if msg == nil { // the connection stopped
		return nil, closedErr(c.Err())
	}
	if msg.Error != nil {
		return nil, msg.Error
	}
	return msg.Result, nil
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
	p, err := jsonx.Marshal(params)
	if err != nil {
		return err
	}
	return c.write(&Message{JSONRPC: "2.0", Method: method, Params: p}, method+" notification")
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
	// Not under writeMu: a write stuck on a peer that stopped reading must not keep
	// the connection from stopping.
	close(c.done)
	c.baseStop()
	c.t.Stop() // wake a blocked reader so it sees the stop
	for _, ch := range pending {
		close(ch)
	}
}
