package pipeio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/hermes-go/hermes/internal/clock"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// pumpGrace is how long the background reader stays away after the last call ends,
// so back-to-back calls keep reading their own responses.
const pumpGrace = 2 * time.Millisecond

// Transport reads a plugin→host pipe for a protocol.Conn.
//
// Reading is a token held by one goroutine at a time. A goroutine waiting for its
// response reads the stream itself ("caller reads"), so a round trip costs no
// goroutine hand-off; the background pump (Serve) reads only while nobody is
// calling. A read deadline lets a caller take over reading from the pump.
type Transport struct {
	f     *os.File
	lines *protocol.LineReader // token holder only
	wait  *waitReader          // the pipe's reader when it can wait on the caller's thread; nil otherwise

	tok         chan struct{} // capacity 1: whoever receives it may read
	stopped     chan struct{}
	waiters     atomic.Int32 // calls waiting for a response
	pumpReading atomic.Bool
	pumpWake    chan struct{} // wakes the pump to re-check whether the connection is quiet
	pumpArmed   atomic.Bool   // a wake-up timer is pending
	lastActive  atomic.Int64  // when the last call ended, in ns since created
	created     time.Time

	// For String: who is reading, and the last ids each way.
	reader      atomic.Int32 // readerNone, readerPump, readerCaller
	msgsRead    atomic.Int64
	lastRespID  atomic.Int64
	lastReqID   atomic.Int64
	reqsWritten atomic.Int64
}

// NewTransport reads f, lines of at most max bytes; nil when f takes no read
// deadlines (it is not a pipe), without which a caller cannot take over.
func NewTransport(f *os.File, max int) *Transport {
	if f.SetReadDeadline(time.Time{}) != nil {
		return nil
	}
	var src io.Reader = f
	wait := newWaitReader(f)
	if wait != nil {
		src = wait
	}
	t := &Transport{
		f: f, wait: wait,
		lines:    protocol.NewLineReader(src, max),
		tok:      make(chan struct{}, 1),
		stopped:  make(chan struct{}),
		pumpWake: make(chan struct{}, 1),
		created:  clock.Now(),
	}
	t.tok <- struct{}{}
	return t
}

const (
	readerNone int32 = iota
	readerPump
	readerCaller
)

// String tells who holds the read token and reads, the calls waiting, and the
// last ids each way, for protocol.Conn.State. Safe to call at any time.
func (t *Transport) String() string {
	reader := [...]string{"nobody", "the background pump", "a caller"}[t.reader.Load()]
	return fmt.Sprintf("read token free=%v, reading: %s, calls waiting=%d, pump reading=%v, pump armed=%v, "+
		"messages read=%d, last response id=%d, requests written=%d, last request id=%d",
		len(t.tok) == 1, reader, t.waiters.Load(), t.pumpReading.Load(), t.pumpArmed.Load(),
		t.msgsRead.Load(), t.lastRespID.Load(), t.reqsWritten.Load(), t.lastReqID.Load())
}

// Serve is the background pump: it reads while no call is waiting.
func (t *Transport) Serve(deliver func(*protocol.Message) error) error {
	for {
		if !t.pumpTurn() {
			return nil
		}
		select {
		case <-t.tok:
		case <-t.stopped:
			return nil
		}
		select {
		case <-t.stopped:
			// Both were ready and select chose the token: a read now would come
			// after Stop's kick, and block until the peer's end closes.
			t.tok <- struct{}{}
			return nil
		default:
		}
		t.pumpReading.Store(true)
		// A call that started after pumpTurn looked will find pumpReading set and
		// interrupt the read, or we see it here and step aside.
		if t.waiters.Load() > 0 {
			t.pumpReading.Store(false)
			t.tok <- struct{}{}
			continue
		}
		t.reader.Store(readerPump)
		msg, err := t.readMessage()
		t.reader.Store(readerNone)
		t.pumpReading.Store(false)
		if isTimeout(err) {
			t.clearDeadline()
			t.tok <- struct{}{}
			continue
		}
		// Deliver before letting go of the token, as a reading caller does: a
		// caller that takes the token must find an answer already read in its
		// channel, or it would wait on the pipe for an answer that is not coming.
		if err == nil {
			err = deliver(msg)
		}
		t.tok <- struct{}{}
		if err != nil {
			return err
		}
	}
}

// Await waits for a call's response, reading the pipe itself whenever it holds
// the read token.
func (t *Transport) Await(ctx context.Context, id int64, answer <-chan *protocol.Message, deliver func(*protocol.Message) error) (*protocol.Message, error) {
	t.reqsWritten.Add(1)
	t.lastReqID.Store(id)
	t.waiters.Add(1)
	defer t.leave()
	if t.pumpReading.Load() {
		t.kick()
	}
	for {
		select {
		case msg := <-answer:
			return msg, nil
		case <-t.tok:
			err := t.readUntil(ctx, answer, deliver)
			t.tok <- struct{}{}
			if err != nil {
				return nil, err
			}
		case <-ctx.Done():
			return nil, nil
		case <-t.stopped:
			return nil, nil
		}
	}
}

// readUntil reads and delivers messages, as the token holder, until answer has
// the response, ctx ends or the connection stops. It returns only real read
// failures.
func (t *Transport) readUntil(ctx context.Context, answer <-chan *protocol.Message, deliver func(*protocol.Message) error) error {
	if ctx.Done() != nil {
		stopKick := context.AfterFunc(ctx, t.kick)
		defer stopKick()
	}
	if t.wait != nil {
		callsWaiting.Add(1)
		t.wait.setEager(true)
		defer func() {
			t.wait.setEager(false)
			callsWaiting.Add(-1)
		}()
	}
	for len(answer) == 0 {
		if ctx.Err() != nil {
			return nil
		}
		select {
		case <-t.stopped:
			return nil
		default:
		}
		t.reader.Store(readerCaller)
		msg, err := t.readMessage()
		t.reader.Store(readerNone)
		if isTimeout(err) {
			t.clearDeadline()
			continue
		}
		if err != nil {
			return err
		}
		if msg.Method != "" && len(msg.ID) > 0 && t.wait != nil {
			// The plugin called back (ctx.call_mcp, ctx.llm…): our answer now
			// waits on hermes' own work, which needs the P an eager wait holds
			// (with GOMAXPROCS=1, 1 ms per wait), so wait on the poller from here.
			t.wait.setEager(false)
		}
		if err := deliver(msg); err != nil {
			return err
		}
	}
	return nil
}

// Stop wakes whoever is blocked reading so it sees the stop.
func (t *Transport) Stop() {
	close(t.stopped)
	t.kick()
}

// readMessage reads and decodes one message. Only the token holder calls it.
func (t *Transport) readMessage() (*protocol.Message, error) {
	line, err := t.lines.ReadLine()
	if err != nil {
		return nil, err
	}
	t.msgsRead.Add(1)
	msg := fastResponse(line)
	if msg == nil {
		if msg, err = protocol.DecodeMessage(line); err != nil {
			return nil, err
		}
	}
	if msg.Method == "" && len(msg.ID) > 0 {
		if id, err := strconv.ParseInt(string(msg.ID), 10, 64); err == nil {
			t.lastRespID.Store(id)
		}
	}
	return msg, nil
}

// pumpTurn waits until no call has been waiting for pumpGrace; false when stopped.
// It is woken by a timer armed when calls end, at most one per pumpGrace however
// many calls run, so back-to-back calls never wake the pump goroutine.
func (t *Transport) pumpTurn() bool {
	for !t.quiet() {
		select {
		case <-t.pumpWake:
		case <-t.stopped:
			return false
		}
	}
	return true
}

func (t *Transport) now() int64 { return int64(time.Since(t.created)) }

// quiet: no call is waiting and none ended within pumpGrace. Before any call the
// connection is quiet, so the pump reads from the start.
func (t *Transport) quiet() bool {
	if t.waiters.Load() > 0 {
		return false
	}
	last := t.lastActive.Load()
	return last == 0 || t.now()-last >= int64(pumpGrace)
}

// armPump schedules a wake-up of the pump when the connection may have become quiet.
func (t *Transport) armPump(after time.Duration) {
	if t.pumpArmed.CompareAndSwap(false, true) {
		time.AfterFunc(after, t.pumpTimer)
	}
}

func (t *Transport) pumpTimer() {
	t.pumpArmed.Store(false)
	if t.waiters.Load() > 0 {
		return // the call that is waiting re-arms when it ends
	}
	if rest := int64(pumpGrace) - (t.now() - t.lastActive.Load()); rest > 0 {
		t.armPump(time.Duration(rest))
		return
	}
	select {
	case t.pumpWake <- struct{}{}:
	default:
	}
}

func (t *Transport) leave() {
	t.lastActive.Store(t.now())
	if t.waiters.Add(-1) == 0 {
		t.armPump(pumpGrace)
	}
}

func isTimeout(err error) bool { return err != nil && errors.Is(err, os.ErrDeadlineExceeded) }

// kick interrupts whoever is blocked reading, so a caller can take the token.
func (t *Transport) kick() { _ = t.f.SetReadDeadline(time.Unix(1, 0)) }

func (t *Transport) clearDeadline() { _ = t.f.SetReadDeadline(time.Time{}) }
