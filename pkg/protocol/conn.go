package protocol

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/hermes-go/hermes/internal/jsonx"
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

// pumpGrace is how long the background reader stays away after the last call ends,
// so back-to-back calls keep reading their own responses.
const pumpGrace = 2 * time.Millisecond

// deadliner is implemented by *os.File pipes: a read deadline lets a caller take
// over reading from the background reader.
type deadliner interface {
	SetReadDeadline(time.Time) error
}

// Conn is a symmetric JSON-RPC 2.0 connection over newline-delimited JSON: both sides
// can call and serve at the same time, with any number of calls in flight.
//
// Reading is a token held by one goroutine at a time. When the reader supports read
// deadlines (pipes), a goroutine waiting for its response reads the stream itself
// ("caller reads"), so a round trip costs no goroutine hand-off; a background pump
// reads only while nobody is calling. Other readers use the pump alone.
type Conn struct {
	w       io.Writer
	handler Handler
	max     int
	br      *bufio.Reader
	partial []byte // bytes of an unfinished line, owned by the token holder
	dl      deadliner
	wait    *waitReader // the pipe's reader when it can wait on the caller's thread; nil otherwise

	tok         chan struct{} // capacity 1: whoever receives it may read
	waiters     atomic.Int32  // calls waiting for a response
	pumpReading atomic.Bool
	pumpWake    chan struct{} // wakes the pump to re-check whether the connection is quiet
	pumpArmed   atomic.Bool   // a wake-up timer is pending
	lastActive  atomic.Int64  // when the last call ended, in ns since created
	created     time.Time

	// For State: who is reading, and the last ids each way.
	reader      atomic.Int32 // readerNone, readerPump, readerCaller
	msgsRead    atomic.Int64
	lastRespID  atomic.Int64
	lastReqID   atomic.Int64
	reqsWritten atomic.Int64

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

// NewConn wraps a reader and writer. Call Run to start serving.
func NewConn(r io.Reader, w io.Writer, h Handler, opts ConnOptions) *Conn {
	max := opts.MaxMessageBytes
	if max <= 0 {
		max = DefaultMaxMessageBytes
	}
	var dl deadliner
	var wait *waitReader
	src := r
	if f, ok := r.(*os.File); ok && f.SetReadDeadline(time.Time{}) == nil {
		dl = f
		if wait = newWaitReader(f); wait != nil {
			src = wait
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Conn{
		w: w, handler: h, max: max, dl: dl, wait: wait,
		br:       bufio.NewReaderSize(src, 64<<10),
		tok:      make(chan struct{}, 1),
		pumpWake: make(chan struct{}, 1),
		created:  time.Now(),
		pending:  map[int64]chan *Message{},
		serving:  map[string]context.CancelFunc{},
		done:     make(chan struct{}),
		baseCtx:  ctx,
		baseStop: cancel,
	}
	c.tok <- struct{}{}
	return c
}

const (
	readerNone int32 = iota
	readerPump
	readerCaller
)

// State describes the connection for a stall report: who holds the read token
// and reads, the calls waiting, and the last ids each way. Safe to call at any time.
func (c *Conn) State() string {
	c.mu.Lock()
	pending := make([]int64, 0, len(c.pending))
	for id := range c.pending {
		pending = append(pending, id)
	}
	stopped := c.stopped
	c.mu.Unlock()
	slices.Sort(pending)
	reader := [...]string{"nobody", "the background pump", "a caller"}[c.reader.Load()]
	return fmt.Sprintf("read token free=%v, reading: %s, calls waiting=%d, pump reading=%v, pump armed=%v, "+
		"messages read=%d, last response id=%d, requests written=%d, last request id=%d, pending ids=%v, "+
		"deadline reads=%v, stopped=%v",
		len(c.tok) == 1, reader, c.waiters.Load(), c.pumpReading.Load(), c.pumpArmed.Load(),
		c.msgsRead.Load(), c.lastRespID.Load(), c.reqsWritten.Load(), c.lastReqID.Load(), pending,
		c.dl != nil, stopped)
}

// Done is closed when the connection stops.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err reports why the connection stopped (io.EOF for a clean close by the peer).
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stopErr
}

// Run serves the connection until the peer closes the stream, a malformed or
// oversized message arrives, or Close is called, and returns the reason (io.EOF for
// a clean close).
func (c *Conn) Run() error {
	for {
		if c.dl != nil && !c.pumpTurn() {
			return c.Err()
		}
		select {
		case <-c.tok:
		case <-c.done:
			return c.Err()
		}
		select {
		case <-c.done:
			// Both were ready and select chose the token: a read now would come
			// after Close's kick, and block until the peer's end closes.
			c.tok <- struct{}{}
			return c.Err()
		default:
		}
		if c.dl != nil {
			c.pumpReading.Store(true)
			// A call that started after pumpTurn looked will find pumpReading set and
			// interrupt the read, or we see it here and step aside.
			if c.waiters.Load() > 0 {
				c.pumpReading.Store(false)
				c.tok <- struct{}{}
				continue
			}
		}
		c.reader.Store(readerPump)
		msg, err := c.readMessage()
		c.reader.Store(readerNone)
		c.pumpReading.Store(false)
		if isTimeout(err) {
			c.clearDeadline()
			c.tok <- struct{}{}
			continue
		}
		// Dispatch before letting go of the token, as a reading caller does: a
		// caller that takes the token must find an answer already read in its
		// channel, or it would wait on the pipe for an answer that is not coming.
		if err == nil {
			err = c.dispatch(msg)
		}
		c.tok <- struct{}{}
		if err != nil {
			c.stop(err)
			return c.Err()
		}
	}
}

// pumpTurn waits until no call has been waiting for pumpGrace; false when stopped.
// It is woken by a timer armed when calls end, at most one per pumpGrace however
// many calls run, so back-to-back calls never wake the pump goroutine.
func (c *Conn) pumpTurn() bool {
	for !c.quiet() {
		select {
		case <-c.pumpWake:
		case <-c.done:
			return false
		}
	}
	return true
}

func (c *Conn) now() int64 { return int64(time.Since(c.created)) }

// quiet: no call is waiting and none ended within pumpGrace. Before any call the
// connection is quiet, so the pump reads from the start.
func (c *Conn) quiet() bool {
	if c.waiters.Load() > 0 {
		return false
	}
	last := c.lastActive.Load()
	return last == 0 || c.now()-last >= int64(pumpGrace)
}

// armPump schedules a wake-up of the pump when the connection may have become quiet.
func (c *Conn) armPump(after time.Duration) {
	if c.pumpArmed.CompareAndSwap(false, true) {
		time.AfterFunc(after, c.pumpTimer)
	}
}

func (c *Conn) pumpTimer() {
	c.pumpArmed.Store(false)
	if c.waiters.Load() > 0 {
		return // the call that is waiting re-arms when it ends
	}
	if rest := int64(pumpGrace) - (c.now() - c.lastActive.Load()); rest > 0 {
		c.armPump(time.Duration(rest))
		return
	}
	select {
	case c.pumpWake <- struct{}{}:
	default:
	}
}

func isTimeout(err error) bool { return err != nil && errors.Is(err, os.ErrDeadlineExceeded) }

// kick interrupts whoever is blocked reading, so a caller can take the token.
func (c *Conn) kick() {
	if c.dl != nil {
		_ = c.dl.SetReadDeadline(time.Unix(1, 0))
	}
}

func (c *Conn) clearDeadline() {
	if c.dl != nil {
		_ = c.dl.SetReadDeadline(time.Time{})
	}
}

// readMessage reads one non-blank line and decodes it. Only the token holder calls it.
func (c *Conn) readMessage() (*Message, error) {
	for {
		line, err := c.readLine()
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		c.msgsRead.Add(1)
		if msg := fastResponse(line); msg != nil {
			return msg, nil
		}
		var msg Message
		if uerr := json.Unmarshal(line, &msg); uerr != nil {
			return nil, fmt.Errorf("malformed protocol message %q: %w", truncate(line, 120), uerr)
		}
		if msg.JSONRPC != "2.0" {
			return nil, fmt.Errorf("protocol message without jsonrpc 2.0: %q", truncate(line, 120))
		}
		return &msg, nil
	}
}

// readLine returns the next line. Bytes read before an interrupted read are kept in
// c.partial, so a deadline never loses data.
func (c *Conn) readLine() ([]byte, error) {
	for {
		chunk, err := c.br.ReadSlice('\n')
		if len(c.partial)+len(chunk) > c.max+1 {
			c.partial = nil
			return nil, fmt.Errorf("%w (%d bytes)", ErrMessageTooLarge, c.max)
		}
		if err == nil {
			if len(c.partial) == 0 {
				return chunk, nil
			}
			line := append(c.partial, chunk...)
			c.partial = nil
			return line, nil
		}
		c.partial = append(c.partial, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) && len(c.partial) > 0 {
			line := c.partial
			c.partial = nil
			return line, nil
		}
		return nil, err
	}
}

// fastResponse decodes the common success response, {"jsonrpc":"2.0","id":N,
// "result":R}, without the general decoder (which the round trip of every tool call
// would pay); anything else returns nil and takes the general path.
func fastResponse(line []byte) *Message {
	const head = `{"jsonrpc":"2.0","id":`
	const mid = `,"result":`
	line = bytes.TrimRight(line, " \r\n")
	if !bytes.HasPrefix(line, []byte(head)) || len(line) < len(head)+len(mid)+3 || line[len(line)-1] != '}' {
		return nil
	}
	rest := line[len(head):]
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	if n == 0 || n > 18 || (n > 1 && rest[0] == '0') || !bytes.HasPrefix(rest[n:], []byte(mid)) {
		return nil
	}
	result := rest[n+len(mid) : len(rest)-1]
	if !json.Valid(result) {
		return nil // e.g. more keys after the result
	}
	buf := make([]byte, n+len(result))
	copy(buf, rest[:n])
	copy(buf[n:], result)
	return &Message{JSONRPC: "2.0", ID: buf[:n:n], Result: buf[n:]}
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
		return nil
	case len(msg.ID) > 0: // response
		id, err := strconv.ParseInt(string(msg.ID), 10, 64)
		if err != nil {
			return fmt.Errorf("response with unknown id %s", msg.ID)
		}
		c.lastRespID.Store(id)
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
	b, err := jsonx.Marshal(msg)
	if err != nil {
		return err
	}
	if len(b)+1 > c.max {
		return &TooLargeError{What: what, Size: len(b) + 1, Max: c.max}
	}
	return c.writeBytes(append(b, '\n'))
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

// writeRequest frames a request by hand: params are already encoded, and going
// through Message would make encoding/json validate and copy them a second time.
func (c *Conn) writeRequest(id int64, method string, params []byte, ap jsonAppender) error {
	bp := framePool.Get().(*[]byte)
	b := append((*bp)[:0], `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"method":`...)
	b = jsonx.AppendString(b, method)
	b = append(b, `,"params":`...)
	if ap != nil {
		// The hot paths' parameters are encoded straight into the frame.
		var err error
		if b, err = ap.appendJSON(b); err != nil {
			*bp = b[:0]
			framePool.Put(bp)
			return &encodeError{method: method, err: err}
		}
	} else {
		b = append(b, params...)
	}
	b = append(b, "}\n"...)
	if len(b) > c.max {
		// The peer would drop the connection over it (and every call with it).
		err := &TooLargeError{What: method + " request", Size: len(b), Max: c.max}
		if cap(b) <= 64<<10 {
			*bp = b[:0]
			framePool.Put(bp)
		}
		return err
	}
	err := c.writeBytes(b)
	if err == nil {
		c.reqsWritten.Add(1)
		c.lastReqID.Store(id)
	}
	if cap(b) <= 64<<10 {
		*bp = b
		framePool.Put(bp)
	}
	return err
}

// encodeError is a request whose parameters could not be encoded: nothing was sent.
type encodeError struct {
	method string
	err    error
}

func (e *encodeError) Error() string { return fmt.Sprintf("encode %s params: %v", e.method, e.err) }
func (e *encodeError) Unwrap() error { return e.err }

var framePool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

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
	// The two result types of the hot paths skip the reflective decoder: raw results
	// (already validated when the message was read) and plain strings.
	switch r := result.(type) {
	case *json.RawMessage:
		*r = raw
		return nil
	case *string:
		if s, ok := plainJSONString(raw); ok {
			*r = s
			return nil
		}
	}
	if err := json.Unmarshal(raw, result); err != nil {
		return fmt.Errorf("decode %s result: %w", method, err)
	}
	return nil
}

// plainJSONString decodes a JSON string result without the reflective decoder:
// plain text, and the escapes a tool's result (itself JSON) is full of. It
// declines (false) what it does not decode exactly as encoding/json would:
// \u escapes, invalid UTF-8 (replaced by U+FFFD there), anything malformed.
func plainJSONString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	if !utf8.Valid(body) {
		return "", false
	}
	i := bytes.IndexByte(body, '\\')
	if i < 0 {
		i = len(body)
	}
	for _, c := range body[:i] {
		if c == '"' || c < 0x20 {
			return "", false
		}
	}
	if i == len(body) {
		return string(body), true
	}
	out := make([]byte, 0, len(body))
	out = append(out, body[:i]...)
	for i < len(body) {
		c := body[i]
		if c == '"' || c < 0x20 {
			return "", false
		}
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		if i+1 == len(body) {
			return "", false
		}
		switch e := body[i+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'n':
			out = append(out, '\n')
		case 't':
			out = append(out, '\t')
		case 'r':
			out = append(out, '\r')
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		default:
			return "", false
		}
		i += 2
	}
	return string(out), true
}

// CallRaw is Call returning the undecoded result.
func (c *Conn) CallRaw(ctx context.Context, method string, params any) (json.RawMessage, error) {
	var p []byte
	var ap jsonAppender
	if rp, ok := params.(RawParams); ok {
		p = rp
	} else if a, ok := params.(jsonAppender); ok {
		ap = a
	} else {
		var err error
		if p, err = jsonx.Marshal(params); err != nil {
			return nil, fmt.Errorf("encode %s params: %w", method, err)
		}
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

	var tok chan struct{}
	if c.dl != nil {
		tok = c.tok
		c.waiters.Add(1)
		defer c.leave()
	}
	if err := c.writeRequest(id, method, p, ap); err != nil {
		c.forget(id)
		var big *TooLargeError
		if _, ok := err.(*encodeError); ok || errors.As(err, &big) {
			return nil, err // nothing was sent: the connection is fine
		}
		if errors.Is(err, ErrClosed) {
			return nil, closedErr(c.Err())
		}
		return nil, fmt.Errorf("send %s: %w", method, err)
	}
	if c.pumpReading.Load() {
		c.kick()
	}
	for {
		select {
		case msg := <-ch:
			return c.result(msg)
		case <-tok:
			if err := c.readUntil(ctx, ch); err != nil {
				c.tok <- struct{}{}
				c.stop(err)
				continue
			}
			c.tok <- struct{}{}
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
}

func (c *Conn) result(msg *Message) (json.RawMessage, error) {
	if msg == nil {
		return nil, closedErr(c.Err())
	}
	if msg.Error != nil {
		return nil, msg.Error
	}
	return msg.Result, nil
}

// readUntil reads and dispatches messages, as the token holder, until ch has our
// response, ctx ends or the connection stops. It returns only real read failures.
func (c *Conn) readUntil(ctx context.Context, ch chan *Message) error {
	if ctx.Done() != nil {
		stopKick := context.AfterFunc(ctx, c.kick)
		defer stopKick()
	}
	if c.wait != nil {
		callsWaiting.Add(1)
		c.wait.setEager(true)
		defer func() {
			c.wait.setEager(false)
			callsWaiting.Add(-1)
		}()
	}
	for len(ch) == 0 {
		if ctx.Err() != nil {
			return nil
		}
		select {
		case <-c.done:
			return nil
		default:
		}
		c.reader.Store(readerCaller)
		msg, err := c.readMessage()
		c.reader.Store(readerNone)
		if isTimeout(err) {
			c.clearDeadline()
			continue
		}
		if err != nil {
			return err
		}
		if err := c.dispatch(msg); err != nil {
			return err
		}
	}
	return nil
}

func (c *Conn) leave() {
	c.lastActive.Store(c.now())
	if c.waiters.Add(-1) == 0 {
		c.armPump(pumpGrace)
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
	c.kick() // wake a blocked reader so it sees the stop
	for _, ch := range pending {
		close(ch)
	}
}
