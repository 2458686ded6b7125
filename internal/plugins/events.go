package plugins

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hermes-go/hermes/pkg/protocol"
)

// Event-bus limits (upstream: recursion depth 8, 64 pending deliveries).
const (
	eventDepthCap   = 8
	eventPendingCap = 64
	eventTimeout    = 30 * time.Second
)

type subscription struct {
	plugin    *Plugin
	event     string
	deliver   func(ctx context.Context, event string, payload map[string]any) error
	cancelled atomic.Bool
}

type delivery struct {
	sub     *subscription
	event   string
	payload map[string]any
	depth   int
}

// eventBus carries ctx.emit messages to ctx.subscribe callbacks: fire-and-forget,
// FIFO on one worker, each subscriber getting its own copy of the payload.
type eventBus struct {
	m     *Manager
	mu    sync.Mutex
	subs  map[string][]*subscription
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

func newEventBus(m *Manager) *eventBus {
	idle := make(chan struct{})
	close(idle)
	return &eventBus{m: m, subs: map[string][]*subscription{}, queue: make(chan delivery, eventPendingCap),
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

func (m *Manager) addSubscription(p *Plugin, event string, deliver func(context.Context, string, map[string]any) error) {
	s := &subscription{plugin: p, event: event, deliver: deliver}
	m.addPending(p, func(r *registrations) {
		r.subs = append(r.subs, s)
		r.events = append(r.events, event)
	})
}

// waitEarlierCommitted makes an emit made during register() wait until the
// plugins before p in load order have committed, so their subscriptions hear
// it as they would in upstream's one-after-another load, though plugins
// register in parallel here. Earlier plugins never wait for later ones, so
// this cannot deadlock; ctx bounds it all the same.
func (m *Manager) waitEarlierCommitted(ctx context.Context, p *Plugin) {
	p.mu.Lock()
	ch := p.earlierCommitted
	if p.Loaded {
		ch = nil
	}
	p.mu.Unlock()
	if ch == nil {
		return
	}
	select {
	case <-ch:
	case <-ctx.Done():
	}
}

func (b *eventBus) subscribe(s *subscription) func() {
	b.mu.Lock()
	b.subs[s.event] = append(b.subs[s.event], s)
	b.mu.Unlock()
	return func() {
		s.cancelled.Store(true)
		b.mu.Lock()
		list := b.subs[s.event]
		for i, x := range list {
			if x == s {
				b.subs[s.event] = append(list[:i:i], list[i+1:]...)
				break
			}
		}
		b.mu.Unlock()
	}
}

// emit publishes "<plugin key>:<event>" and returns how many deliveries were queued.
func (b *eventBus) emit(p *Plugin, event string, payload map[string]any) (int, error) {
	if event == "" {
		return 0, protocol.Errorf(protocol.CodeInvalidArgument, "emit: event name must be a non-empty string")
	}
	if strings.Contains(event, ":") {
		return 0, protocol.Errorf(protocol.CodeInvalidArgument,
			"emit: event name %q must not contain ':' (it is published as '<plugin>:<event>'; 'hermes:' is reserved)", event)
	}
	ns := p.Key
	if ns == "" && p.Candidate.Manifest != nil {
		ns = p.Candidate.Manifest.Name
	}
	qualified := ns + ":" + event
	depth := int(b.depth.Load()) + 1
	if depth > eventDepthCap {
		b.m.warn("event %s dropped: emit recursion depth cap (%d) reached", qualified, eventDepthCap)
		return 0, nil
	}
	b.mu.Lock()
	subs := append([]*subscription(nil), b.subs[qualified]...)
	closed := b.closed
	b.mu.Unlock()
	// A plugin that subscribed to its own event earlier in register() hears it,
	// as in upstream, where a subscription is live at once.
	p.mu.Lock()
	for _, s := range p.pending.subs {
		if s.event == qualified {
			subs = append(subs, s)
		}
	}
	p.mu.Unlock()
	if closed {
		b.m.log.Warn("event dropped: hermes is shutting down", "event", qualified)
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
			b.m.warn("event %s to plugin %s dropped: pending budget of %d deliveries exceeded", qualified, s.plugin.Key, eventPendingCap)
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
	if d.sub.cancelled.Load() {
		return
	}
	b.depth.Store(int32(d.depth))
	defer b.depth.Store(0)
	ctx, cancel := context.WithTimeout(context.Background(), eventTimeout)
	defer cancel()
	if err := d.sub.deliver(ctx, d.event, d.payload); err != nil {
		b.m.log.Warn("event subscriber failed", "plugin", d.sub.plugin.Key, "event", d.event, "error", err)
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
			b.m.log.Warn("shutting down with undelivered plugin events", "pending", n)
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
