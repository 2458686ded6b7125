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
}

func newEventBus(m *Manager) *eventBus {
	return &eventBus{m: m, subs: map[string][]*subscription{}, queue: make(chan delivery, eventPendingCap), done: make(chan struct{})}
}

func (m *Manager) addSubscription(p *Plugin, event string, deliver func(context.Context, string, map[string]any) error) {
	s := &subscription{plugin: p, event: event, deliver: deliver}
	m.addPending(p, func(r *registrations) {
		r.subs = append(r.subs, s)
		r.events = append(r.events, event)
	})
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
	b.mu.Unlock()
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
		select {
		case b.queue <- delivery{sub: s, event: qualified, payload: copyOf, depth: depth}:
			queued++
		default:
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
			if d.sub.cancelled.Load() {
				continue
			}
			b.depth.Store(int32(d.depth))
			ctx, cancel := context.WithTimeout(context.Background(), eventTimeout)
			if err := d.sub.deliver(ctx, d.event, d.payload); err != nil {
				b.m.log.Warn("event subscriber failed", "plugin", d.sub.plugin.Key, "event", d.event, "error", err)
			}
			cancel()
			b.depth.Store(0)
		}
	}
}

func (b *eventBus) close() {
	select {
	case <-b.done:
	default:
		close(b.done)
	}
}
