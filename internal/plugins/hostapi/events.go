package hostapi

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hermes-go/hermes/internal/plugins/registry"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// Event-bus limits (upstream: recursion depth 8, 64 pending deliveries).
const (
	eventDepthCap   = 8
	eventPendingCap = 64
	eventTimeout    = 30 * time.Second
)

type delivery struct {
	sub     *registry.Subscription
	event   string
	payload map[string]any
	depth   int
}

// eventBus carries ctx.emit messages to ctx.subscribe callbacks: fire-and-forget,
// FIFO on one worker, each subscriber getting its own copy of the payload.
type eventBus struct {
	h     *Host
	mu    sync.Mutex
	queue chan delivery
	depth atomic.Int32 // depth of the delivery in progress (0: none)
	once  sync.Once
	done  chan struct{}

	// pending counts deliveries queued or running (under mu); idle is closed while
	// it is zero, so shutdown can wait for what was already emitted.
	pending int
	idle    chan struct{}
	closed  bool
}

func newEventBus(h *Host) *eventBus {
	idle := make(chan struct{})
	close(idle)
	return &eventBus{h: h, queue: make(chan delivery, eventPendingCap),
		done: make(chan struct{}), idle: idle}
}

// track adds n to the deliveries in flight.
func (b *eventBus) track(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pending == 0 && n > 0 {
		b.idle = make(chan struct{})
	}
	b.pending += n
	if b.pending == 0 && n < 0 {
		close(b.idle)
	}
}

func subscribe(_ context.Context, s *Session, sp protocol.SubscribeParams) (any, error) {
	s.Subscribe(sp.Event, s.remoteEvent(sp.Handle))
	return protocol.RegisterResult{Registered: true}, nil
}

// Subscribe records a ctx.subscribe callback for a qualified event name.
func (s *Session) Subscribe(event string, deliver func(context.Context, string, map[string]any) error) {
	s.h.reg.AddSubscription(s.p.ID(), &registry.Subscription{Event: event, Plugin: s.p.ID(), Deliver: deliver})
}

func emit(ctx context.Context, s *Session, ep protocol.EmitParams) (any, error) {
	// An emit made during register() waits until the plugins before this one in
	// load order have committed, so their subscriptions hear it as they would in
	// upstream's one-after-another load, though plugins register in parallel here.
	s.p.WaitEarlierCommitted(ctx)
	return s.h.events.emit(s.p, ep.Event, ep.Payload)
}

// emit publishes "<plugin key>:<event>" and returns how many deliveries were queued.
func (b *eventBus) emit(p Caller, event string, payload map[string]any) (int, error) {
	if event == "" {
		return 0, protocol.Errorf(protocol.CodeInvalidArgument, "emit: event name must be a non-empty string")
	}
	if strings.Contains(event, ":") {
		return 0, protocol.Errorf(protocol.CodeInvalidArgument,
			"emit: event name %q must not contain ':' (it is published as '<plugin>:<event>'; 'hermes:' is reserved)", event)
	}
	ns := p.ID()
	if ns == "" && p.Manifest() != nil {
		ns = p.Manifest().Name
	}
	qualified := ns + ":" + event
	depth := int(b.depth.Load()) + 1
	if depth > eventDepthCap {
		b.h.opts.Warn("event %s dropped: emit recursion depth cap (%d) reached", qualified, eventDepthCap)
		return 0, nil
	}
	b.mu.Lock()
	closed := b.closed
	b.mu.Unlock()
	// A plugin that subscribed to its own event earlier in register() hears it,
	// as in upstream, where a subscription is live at once.
	subs := b.h.reg.Subscribers(qualified, p.ID())
	if closed {
		b.h.log.Warn("event dropped: hermes is shutting down", "event", qualified)
		return 0, nil
	}
	if len(subs) == 0 {
		return 0, nil
	}
	raw, err := json.Marshal(payload)
	if err != nil {
		return 0, protocol.Errorf(protocol.CodeTypeError, "emit: payload is not JSON-serialisable: %v", err)
	}
	b.once.Do(func() { go b.work() })
	queued := 0
	for _, s := range subs {
		var copyOf map[string]any
		_ = json.Unmarshal(raw, &copyOf)
		if copyOf == nil {
			copyOf = map[string]any{}
		}
		b.track(1)
		select {
		case b.queue <- delivery{sub: s, event: qualified, payload: copyOf, depth: depth}:
			queued++
		default:
			b.track(-1)
			b.h.opts.Warn("event %s to plugin %s dropped: pending budget of %d deliveries exceeded", qualified, s.Plugin, eventPendingCap)
		}
	}
	return queued, nil
}

func (b *eventBus) work() {
	for {
		select {
		case <-b.done:
			return
		case d := <-b.queue:
			b.run(d)
			b.track(-1)
		}
	}
}

func (b *eventBus) run(d delivery) {
	if d.sub.Cancelled() {
		return
	}
	b.depth.Store(int32(d.depth))
	defer b.depth.Store(0)
	ctx, cancel := context.WithTimeout(context.Background(), eventTimeout)
	defer cancel()
	if err := d.sub.Deliver(ctx, d.event, d.payload); err != nil {
		b.h.log.Warn("event subscriber failed", "plugin", d.sub.Plugin, "event", d.event, "error", err)
	}
}

// close delivers what was already emitted (events a delivery emits in turn
// included), waiting at most wait, then stops the worker. Later emits are dropped.
func (b *eventBus) close(wait time.Duration) {
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for {
		b.mu.Lock()
		idle, n := b.idle, b.pending
		b.mu.Unlock()
		if n == 0 {
			break
		}
		select {
		case <-idle:
			continue
		case <-deadline.C:
			b.h.log.Warn("shutting down with undelivered plugin events", "pending", n)
		}
		break
	}
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	select {
	case <-b.done:
	default:
		close(b.done)
	}
}
