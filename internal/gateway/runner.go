// Package gateway is the messaging gateway's runner: it takes the events of
// every platform adapter, decides who may talk (before anything else sees a
// message), answers chat commands, and runs the agent one turn at a time per
// session key, sessions concurrently up to a bound. The agent itself is
// behind Engine (internal/app wires the same model, tools, plugins and hooks
// as `hermes chat`); the platforms behind platform.Adapter.
package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/hermes-go/hermes/internal/gateway/auth"
	"github.com/hermes-go/hermes/internal/gateway/platform"
	"github.com/hermes-go/hermes/internal/hooks"
	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/internal/plugins/registry"
)

// Engine runs the agent for gateway sessions.
type Engine interface {
	// Turn runs one turn of the session key routes to (the stored one, or a
	// new one bound to key) and returns what the agent answered. Cancelling
	// ctx interrupts it; what was said so far stays stored.
	Turn(ctx context.Context, key string, src platform.Source, text string) (TurnResult, error)
	// NewSession starts a new session for key (/new, /reset).
	NewSession(ctx context.Context, key string, src platform.Source) (string, error)
	// Info describes key's session; Exists is false when key has none yet.
	Info(ctx context.Context, key string) (SessionInfo, error)
}

// TurnResult is what a turn produced.
type TurnResult struct {
	SessionID string
	Reply     string
	Usage     llm.Usage
}

// SessionInfo is /status and /usage's view of a session.
type SessionInfo struct {
	Exists    bool
	SessionID string
	Model     string
	Messages  int
	Usage     llm.Usage // this process's turns
}

// Authorizer decides who may talk to the agent (auth.Authorizer).
type Authorizer interface {
	Check(src platform.Source) auth.Decision
	// CheckInjected judges a stored route by the current rules alone (no
	// adapter-time grant): ctx.inject_message.
	CheckInjected(src platform.Source) auth.Decision
	PairingReply(ctx context.Context, src platform.Source) (string, error)
}

// Hooks is the part of the hook dispatcher the runner fires.
type Hooks interface {
	Fire(ctx context.Context, hook hooks.Name, payload map[string]any) []any
	Has(hook hooks.Name) bool
}

// Ledger is the delivery ledger: an answer is recorded before it is sent and
// marked once the platform took it, so one a crash kept from its chat goes
// out after the restart.
type Ledger interface {
	// Record records out as about to be sent (its first attempt counted).
	Record(ctx context.Context, key, platform string, out platform.Outbound) (int64, error)
	Attempt(ctx context.Context, id int64) error
	// Delivered marks answers sent (several at once: one commit).
	Delivered(ctx context.Context, ids ...int64) error
	// Unsent are platform's answers recorded in the last day and never marked
	// sent, tried fewer than three times, oldest first.
	Unsent(ctx context.Context, platform string) ([]Unsent, error)
}

// Unsent is an answer the ledger still owes a chat.
type Unsent struct {
	ID       int64
	Out      platform.Outbound
	Attempts int // more than 0: a send had begun, so it may have arrived
}

// Commands are the plugins' slash commands.
type Commands interface {
	Commands() []*registry.Command
}

// Busy input modes (display.busy_input_mode).
const (
	BusyInterrupt = "interrupt"
	BusyQueue     = "queue"
	BusySteer     = "steer"
)

// Options configure a Runner.
type Options struct {
	Adapters []platform.Adapter
	Engine   Engine
	Auth     Authorizer
	Hooks    Hooks    // nil: none
	Commands Commands // nil: none
	Ledger   Ledger   // nil: answers are not recorded before they are sent
	Routes   Routes   // nil: ctx.inject_message is never routed
	Keys     platform.KeyOptions
	// BusyMode is display.busy_input_mode (default interrupt); BusyAck sends
	// the acknowledgement of a message that arrived mid-turn.
	BusyMode string
	BusyAck  bool
	// MaxConcurrent bounds the turns running at once (default 32).
	MaxConcurrent int
	// DrainTimeout is how long running turns may take to finish after a stop
	// before they are interrupted (default 60 s).
	DrainTimeout time.Duration
	// RequireMention, per platform, answers group and channel messages only
	// when they mention the bot (or reply to it) or are commands.
	RequireMention map[string]bool
	// DispatchHookTimeout bounds pre_gateway_dispatch (default 30 s): the
	// hook runs in the platform's receive path, so a plugin that blocks would
	// stop every chat; past it the message is dispatched as if allowed.
	DispatchHookTimeout time.Duration
	// TypingEvery repeats the typing action while a turn runs (default 4 s).
	TypingEvery time.Duration
	// LeaseHeld, in a cluster, says whether this process still surely holds
	// the queue lease of the item delivery names (platform.Event.Delivery);
	// a queued turn's answer goes out only while it does. nil: always.
	LeaseHeld func(delivery string) bool
	Logger    *slog.Logger
}

// Runner is one gateway.
type Runner struct {
	o        Options
	adapters map[string]platform.Adapter
	sem      chan struct{}
	log      *slog.Logger

	// turnCtx is what every turn runs under: cancelled only when a drain
	// runs out of time, never by the signal that started the drain.
	turnCtx    context.Context
	stopTurns  context.CancelFunc
	mu         sync.Mutex
	lanes      map[string]*lane
	running    sync.WaitGroup // lanes with work, plugin commands
	draining   bool
	authorized map[string]auth.Rule // key → the rule that let its sender in, for /whoami
	approvals  map[string][]*pendingApproval
	// sent takes the ledger ids of answers the platform took; markSent
	// commits them in batches (a crash loses at most a batch's marks: those
	// answers are sent again, marked as possible duplicates).
	sent chan int64
}

// lane is one session key's queue: at most one turn runs in it at a time.
type lane struct {
	key     string
	src     platform.Source
	pending []platform.Event
	// steer holds what arrived mid-turn in steer mode: the running turn
	// takes it at its next tool boundary; what it leaves runs next.
	steer  []platform.Event
	ack    string                  // the interrupt's acknowledgement, sent before the next turn
	cancel context.CancelCauseFunc // of the running turn; nil between turns
	// delivery is the running turn's queue delivery ("" for none).
	delivery string
	// waiters are closed when the lane retires: HandleQueued's callers,
	// which finish their queue item only once its answer is recorded.
	waiters []*queuedWait
}

// Causes of an interrupted turn.
var (
	errInterruptedByUser = errors.New("interrupted by a new message")
	errStopped           = errors.New("stopped with /stop")
	errDrainTimeout      = errors.New("the gateway stopped before the turn finished")
)

// New builds a runner; Run starts it.
func New(o Options) (*Runner, error) {
	if o.Engine == nil || o.Auth == nil {
		return nil, errors.New("gateway: a runner needs an engine and an authorizer")
	}
	if len(o.Adapters) == 0 {
		return nil, errors.New("no messaging platform is enabled: set TELEGRAM_BOT_TOKEN or DISCORD_BOT_TOKEN in $HERMES_HOME/.env (or platforms.<name>.enabled in config.yaml)")
	}
	switch o.BusyMode {
	case "":
		o.BusyMode = BusyInterrupt
	case BusyInterrupt, BusyQueue, BusySteer:
	default:
		return nil, fmt.Errorf("display.busy_input_mode is %q: use interrupt, queue or steer", o.BusyMode)
	}
	if o.MaxConcurrent <= 0 {
		o.MaxConcurrent = 32
	}
	if o.DrainTimeout <= 0 {
		o.DrainTimeout = 60 * time.Second
	}
	if o.DispatchHookTimeout <= 0 {
		o.DispatchHookTimeout = 30 * time.Second
	}
	if o.TypingEvery <= 0 {
		o.TypingEvery = 4 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	r := &Runner{o: o, adapters: map[string]platform.Adapter{}, sem: make(chan struct{}, o.MaxConcurrent), log: o.Logger,
		lanes: map[string]*lane{}, authorized: map[string]auth.Rule{}, approvals: map[string][]*pendingApproval{}}
	for _, a := range o.Adapters {
		if _, dup := r.adapters[a.Name()]; dup {
			return nil, fmt.Errorf("gateway: two adapters for platform %s", a.Name())
		}
		r.adapters[a.Name()] = a
	}
	r.turnCtx, r.stopTurns = context.WithCancel(context.Background())
	if o.Ledger != nil {
		// Made here, not in Run: a cluster's workers may deliver as Run starts.
		r.sent = make(chan int64, 1024)
	}
	return r, nil
}

// Adapter returns the running adapter of a platform (platform actions).
func (r *Runner) Adapter(name string) (platform.Adapter, bool) {
	a, ok := r.adapters[name]
	return a, ok
}

// Run serves every adapter until ctx ends, then drains: the adapters stop
// taking messages, running and queued turns get DrainTimeout to finish, then
// are interrupted (what they said is kept). It returns the first adapter's
// fatal error, if one failed for good.
func (r *Runner) Run(ctx context.Context) error {
	if r.o.Ledger != nil {
		marked := make(chan struct{})
		go func() { defer close(marked); r.markSent() }()
		defer func() { close(r.sent); <-marked }() // after the drain: every send is done
	}
	adCtx, stopAdapters := context.WithCancel(ctx)
	defer stopAdapters()
	errs := make(chan error, len(r.adapters))
	var adapters sync.WaitGroup
	for _, a := range r.o.Adapters {
		if _, onLead := a.(RedeliversOnLead); r.o.Ledger != nil && !onLead {
			r.running.Add(1)
			go func() { defer r.running.Done(); r.redeliver(a) }()
		}
		adapters.Add(1)
		go func() {
			defer adapters.Done()
			if err := a.Run(adCtx, func(ctx context.Context, ev platform.Event) { r.dispatch(ctx, a, ev) }); err != nil {
				if !strings.HasPrefix(err.Error(), a.Name()+":") {
					err = fmt.Errorf("%s: %w", a.Name(), err)
				}
				errs <- err
			}
		}()
	}
	if r.o.Hooks != nil && r.o.Hooks.Has(hooks.HookGatewayReady) {
		adapters.Add(1)
		go func() { defer adapters.Done(); r.ready(adCtx) }()
	}
	var fatal error
	select {
	case <-ctx.Done():
	case fatal = <-errs:
		r.log.Error("gateway: a platform failed", "error", fatal)
	}
	stopAdapters()
	adapters.Wait()
	r.drain()
	return fatal
}

func (r *Runner) drain() {
	r.mu.Lock()
	r.draining = true
	busy := len(r.lanes)
	r.mu.Unlock()
	if busy > 0 {
		r.log.Info("gateway: draining", "sessions", busy, "timeout", r.o.DrainTimeout)
	}
	done := make(chan struct{})
	go func() { r.running.Wait(); close(done) }()
	select {
	case <-done:
		return
	case <-time.After(r.o.DrainTimeout):
	}
	r.log.Warn("gateway: drain timed out; interrupting the turns still running")
	r.mu.Lock()
	for _, l := range r.lanes {
		if l.cancel != nil {
			l.cancel(errDrainTimeout)
		}
	}
	r.mu.Unlock()
	r.stopTurns()
	<-done
}

// dispatch is every adapter's handler: authorise, then commands inline or
// the message onto its session's lane. It never blocks on a turn.
func (r *Runner) dispatch(ctx context.Context, a platform.Adapter, ev platform.Event) {
	r.dispatchTo(ctx, a, ev, nil)
}

// dispatchTo is dispatch; when ev goes onto a lane, done is closed once that
// lane has run it and retired (laned true).
func (r *Runner) dispatchTo(ctx context.Context, a platform.Adapter, ev platform.Event, done *queuedWait) (laned bool) {
	src := ev.Source
	src.Platform = a.Name()
	ev.Source = src
	d := r.o.Auth.Check(src)
	if d.Problem != nil {
		r.log.Warn("gateway: authorisation read a file it could not use", "error", d.Problem)
	}
	if !d.Allowed {
		r.log.Info("gateway: unauthorised message dropped", "platform", src.Platform, "user_id", src.UserID, "chat_type", src.ChatType, "pair", d.Pair)
		if ev.Ack != nil {
			ev.Ack("")
		}
		if d.Pair && ev.Kind == platform.EventMessage {
			text, err := r.o.Auth.PairingReply(ctx, src)
			if err != nil {
				r.log.Warn("gateway: pairing request failed", "platform", src.Platform, "error", err)
			}
			if text != "" {
				r.send(a, platform.Outbound{ChatID: src.ChatID, ThreadID: src.ThreadID, Text: text})
			}
		}
		return false
	}
	switch ev.Kind {
	case platform.EventMessage:
		if src.ChatType != platform.ChatDM && r.o.RequireMention[src.Platform] && !ev.Mentioned {
			if _, _, isCmd := parseCommand(ev.Text); !isCmd {
				return false // not for the bot: groups talk among themselves
			}
		}
	case platform.EventButton:
		r.button(ev)
		return false
	default:
		r.platformEvent(ctx, ev)
		return false
	}
	if r.o.Hooks != nil && r.o.Hooks.Has(hooks.HookPreGatewayDispatch) {
		hctx, cancel := context.WithTimeout(ctx, r.o.DispatchHookTimeout)
		results := r.o.Hooks.Fire(hctx, hooks.HookPreGatewayDispatch, map[string]any{
			"event": eventMap(ev), "gateway": map[string]any{"platforms": r.platformNames()}, "session_store": nil})
		if hctx.Err() != nil && ctx.Err() == nil {
			r.log.Warn("gateway: pre_gateway_dispatch did not answer in time; the message goes on", "timeout", r.o.DispatchHookTimeout)
		}
		cancel()
		skip, text := gatewayDirective(results)
		if skip != "" {
			r.log.Info("gateway: a pre_gateway_dispatch hook skipped a message", "platform", src.Platform, "reason", skip)
			return false
		}
		if text != nil {
			ev.Text = *text
		}
	}
	key := platform.SessionKey(src, r.o.Keys)
	r.mu.Lock()
	r.authorized[key] = d.Rule
	r.mu.Unlock()
	if name, args, ok := parseCommand(ev.Text); ok && r.command(ctx, a, ev, key, name, args) {
		return false
	}
	// A queued event waits behind whatever the lane runs, unannounced: a
	// cluster claims one item per conversation at a time, so a busy lane is
	// a stale turn unwinding (its lease lost), not the user talking over it.
	return r.enqueueWait(a, key, ev, done == nil, done)
}

// enqueue puts ev on key's lane, starting the lane or, when a turn runs and
// the user sent it, doing what display.busy_input_mode says (a plugin's
// injected message waits its turn, unannounced). False while draining.
func (r *Runner) enqueue(a platform.Adapter, key string, ev platform.Event, fromUser bool) bool {
	return r.enqueueWait(a, key, ev, fromUser, nil)
}

// enqueueWait is enqueue; done, when not nil, is closed when the lane retires.
func (r *Runner) enqueueWait(a platform.Adapter, key string, ev platform.Event, fromUser bool, done *queuedWait) bool {
	r.mu.Lock()
	if r.draining {
		r.mu.Unlock()
		return false
	}
	l, busy := r.lanes[key]
	if !busy {
		l = &lane{key: key}
		r.lanes[key] = l
		r.running.Add(1)
	}
	l.src = ev.Source
	if done != nil {
		l.waiters = append(l.waiters, done)
	}
	ack := ""
	switch {
	case !busy || l.cancel == nil || !fromUser:
		l.pending = append(l.pending, ev) // an injection waits its turn: it never interrupts or steers
	case r.o.BusyMode == BusyInterrupt:
		l.pending = append(l.pending, ev)
		l.cancel(errInterruptedByUser)
		// Said by the lane once the turn has stopped, so it comes before the
		// new message's answer, never after it.
		l.ack = "⚡ Interrupting the current task; I'll answer your new message next."
	case r.o.BusyMode == BusySteer:
		l.steer = append(l.steer, ev)
		ack = "⏩ Noted: I'll take this into account in the current task."
	default:
		l.pending = append(l.pending, ev)
		ack = "⏳ Queued: I'll answer this when the current task is done."
	}
	r.mu.Unlock()
	if !busy {
		go r.runLane(a, l)
	}
	if ack != "" && r.o.BusyAck {
		r.send(a, platform.Outbound{ChatID: ev.Source.ChatID, ThreadID: ev.Source.ThreadID, Text: ack})
	}
	return true
}

// runLane runs l's turns until nothing is pending, then retires the lane
// (an idle session costs only its stored rows).
func (r *Runner) runLane(a platform.Adapter, l *lane) {
	defer r.running.Done()
	r.sem <- struct{}{}
	defer func() { <-r.sem }()
	for {
		r.mu.Lock()
		if len(l.pending) == 0 {
			delete(r.lanes, l.key)
			for _, w := range l.waiters {
				close(w.done)
			}
			r.mu.Unlock()
			return
		}
		batch := l.pending
		l.pending = nil
		delivery := batchDelivery(batch)
		src := l.src
		ack := l.ack
		l.ack = ""
		ctx, cancel := context.WithCancelCause(r.turnCtx)
		l.cancel, l.delivery = cancel, delivery
		r.mu.Unlock()
		if ack != "" && r.o.BusyAck {
			r.send(a, platform.Outbound{ChatID: src.ChatID, ThreadID: src.ThreadID, Text: ack})
		}

		reply, ok := r.turn(context.WithValue(ctx, steeringKey{}, r.steering(l)), a, l, src, batch)

		// The turn is over before its answer goes out: a message arriving
		// now waits for the next turn rather than interrupting this one.
		// Steering the turn did not take runs next, first.
		r.mu.Lock()
		l.cancel = nil
		if len(l.steer) > 0 {
			l.pending = append(l.steer, l.pending...)
			l.steer = nil
		}
		r.mu.Unlock()
		cancel(nil)
		if ok && !r.deliver(a, l.key, reply, delivery) {
			r.queuedFail(l, delivery, errNotSent) // the item goes back, and its next delivery answers
		}
	}
}

type steeringKey struct{}

// SteeringFrom returns, for a turn's ctx, what takes the messages sent to
// steer it (display.busy_input_mode: steer): nil outside a runner's turn.
func SteeringFrom(ctx context.Context) func() []string {
	f, _ := ctx.Value(steeringKey{}).(func() []string)
	return f
}

func (r *Runner) steering(l *lane) func() []string {
	return func() []string {
		r.mu.Lock()
		defer r.mu.Unlock()
		if len(l.steer) == 0 {
			return nil
		}
		texts := make([]string, 0, len(l.steer))
		for _, ev := range l.steer {
			texts = append(texts, ev.Text)
		}
		l.steer = nil
		return texts
	}
}

// turn runs one turn for the messages of batch (several when they arrived
// while the previous turn ran: one follow-up turn, as upstream merges them)
// and returns what to answer; ok is false when nothing is.
func (r *Runner) turn(ctx context.Context, a platform.Adapter, l *lane, src platform.Source, batch []platform.Event) (reply platform.Outbound, ok bool) {
	ctx, text := queuedTurn(ctx, batch)
	last := batch[len(batch)-1]
	stopTyping := r.typing(ctx, a, src)
	res, err := r.o.Engine.Turn(ctx, l.key, src, text)
	stopTyping()
	out := platform.Outbound{ChatID: src.ChatID, ThreadID: src.ThreadID}
	switch cause := context.Cause(ctx); {
	case err == nil:
		out.Text = res.Reply
	case errors.Is(cause, errInterruptedByUser), errors.Is(cause, errStopped):
		return out, false // the new message (or /stop's answer) speaks next
	case errors.Is(cause, errLeaseLost):
		r.queuedFail(l, batchDelivery(batch), cause)
		return out, false
	case errors.Is(cause, errDrainTimeout) || r.turnCtx.Err() != nil:
		out.Text = "⚠️ The gateway restarted while I was working on this; what I had done so far is kept. Send your message again to continue."
	default:
		r.log.Warn("gateway: turn failed", "session_key", l.key, "error", err)
		if r.queuedFail(l, batchDelivery(batch), err) {
			return out, false // the queue delivers it again, and says sorry only at its last attempt
		}
		out.Text = "⚠️ Sorry, that failed: " + err.Error()
	}
	if strings.TrimSpace(out.Text) == "" {
		return out, false
	}
	if len(batch) == 1 && src.ChatType != platform.ChatDM {
		out.ReplyTo = last.MessageID
	}
	return out, true
}

// typingGrace is how long stopping the typing action waits for one in
// flight before cancelling it.
const typingGrace = time.Second

// typing repeats the typing action until the returned func is called. That
// func lets an action in flight finish (within typingGrace) rather than
// cancel it: it must reach the chat before the answer (or the chat shows
// "typing…" after it), and a cancelled request costs its connection, which
// with quick turns meant a new connection for most of them.
func (r *Runner) typing(ctx context.Context, a platform.Adapter, src platform.Source) (stop func()) {
	tctx, cancel := context.WithCancel(ctx)
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(r.o.TypingEvery)
		defer t.Stop()
		for {
			if err := a.Typing(tctx, src.ChatID, src.ThreadID); err != nil && tctx.Err() == nil {
				r.log.Debug("gateway: typing action failed", "platform", a.Name(), "error", err)
			}
			select {
			case <-quit:
				return
			case <-tctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() {
		close(quit)
		grace := time.NewTimer(typingGrace)
		defer grace.Stop()
		select {
		case <-done:
		case <-grace.C:
		}
		cancel()
		<-done
	}
}

// sendTimeout bounds one reply: replies go out even while the gateway
// drains, so they do not take the stopped context.
const sendTimeout = 2 * time.Minute

// send sends msg, logging a failure.
func (r *Runner) send(a platform.Adapter, msg platform.Outbound) { _ = r.trySend(a, msg) }

func (r *Runner) trySend(a platform.Adapter, msg platform.Outbound) error {
	ctx, cancel := context.WithTimeout(context.Background(), sendTimeout)
	defer cancel()
	_, err := a.Send(ctx, msg)
	if err != nil {
		r.log.Warn("gateway: sending a reply failed", "platform", a.Name(), "chat_id", msg.ChatID, "error", err)
	}
	return err
}

func (r *Runner) platformNames() []string {
	out := make([]string, 0, len(r.o.Adapters))
	for _, a := range r.o.Adapters {
		out = append(out, a.Name())
	}
	return out
}
