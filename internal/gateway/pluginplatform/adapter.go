// Package pluginplatform is the gateway's adapter for a platform a plugin
// registered (ctx.register_platform): a proxy over the plugin's process,
// where the real adapter object lives. Run asks the plugin to create and
// connect its adapter, Send calls its send(), and its handle_message(event)
// calls come back through the host as Events, checked here first: everything
// a plugin says is untrusted. A plugin that crashes leaves the platform
// disconnected, never the gateway: Run reconnects once the plugin manager
// has restarted it.
package pluginplatform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hermes-go/hermes/internal/clock"
	"github.com/hermes-go/hermes/internal/gateway/platform"
	"github.com/hermes-go/hermes/internal/termsafe"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// Conn calls the plugin process that holds the adapter.
type Conn interface {
	Call(ctx context.Context, method string, params any) (json.RawMessage, error)
	// Exited is closed when the plugin's current process ends.
	Exited() <-chan struct{}
}

// Binder routes the plugin's ctx.platform_event and ctx.platform_status for
// this platform to ev and st until unbind is called.
type Binder func(ev func(context.Context, protocol.PlatformEventParams) error, st func(protocol.PlatformStatusParams)) (unbind func())

// Options configure New.
type Options struct {
	Name   string // the registered platform name (platforms.<name>)
	Plugin string // the registering plugin, for logs
	Conn   Conn
	Bind   Binder
	// Start is what platform.start carries: platforms.<name>.extra and friends.
	Start protocol.PlatformStartParams
	// MaxMessageLength splits longer replies into several sends (0: no limit).
	MaxMessageLength int
	Logger           *slog.Logger
	// CallTimeout bounds one call into the plugin (connect, send); 0: 60 s.
	CallTimeout time.Duration
	// Backoff are the waits between reconnects, the last repeated; nil: 1, 2, 5, 10, 30 s.
	Backoff []time.Duration
	// Clock times events without a plausible timestamp; nil: clock.Now.
	Clock func() time.Time
}

// Adapter is one plugin platform's platform.Adapter.
type Adapter struct {
	o         Options
	connected atomic.Bool
	down      chan protocol.PlatformStatusParams // the plugin said its adapter went down

	mu      sync.Mutex
	handler platform.Handler // set while Run runs
	runCtx  context.Context
}

var _ platform.Adapter = (*Adapter)(nil)

// New returns the adapter; Run connects it.
func New(o Options) (*Adapter, error) {
	if o.Name == "" || o.Conn == nil || o.Bind == nil {
		return nil, errors.New("pluginplatform: Name, Conn and Bind are required")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = 60 * time.Second
	}
	if len(o.Backoff) == 0 {
		o.Backoff = []time.Duration{time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second}
	}
	if o.Clock == nil {
		o.Clock = clock.Now
	}
	o.Start.Name = o.Name
	return &Adapter{o: o, down: make(chan protocol.PlatformStatusParams, 1)}, nil
}

// Name is the platform's name.
func (a *Adapter) Name() string { return a.o.Name }

// Connected reports whether the plugin's adapter is connected now.
func (a *Adapter) Connected() bool { return a.connected.Load() }

// Run connects the plugin's adapter and keeps it connected until ctx ends.
// A failure of the plugin is logged and retried, never returned: it must not
// stop the gateway's other platforms. Only a refusal the plugin calls final
// (a config its validate_config rejects) leaves the platform down for good.
func (a *Adapter) Run(ctx context.Context, h platform.Handler) error {
	a.mu.Lock()
	a.handler, a.runCtx = h, ctx
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.handler, a.runCtx = nil, nil
		a.mu.Unlock()
	}()
	unbind := a.o.Bind(a.event, a.status)
	defer unbind()
	log := a.o.Logger.With("platform", a.o.Name, "plugin", a.o.Plugin)
	reconnect := false
	for attempt := 0; ; attempt++ {
		if ctx.Err() != nil {
			return nil
		}
		a.drainDown()
		exited := a.o.Conn.Exited()
		res, err := a.start(ctx, reconnect)
		reconnect = true
		switch {
		case ctx.Err() != nil:
			a.stop()
			return nil
		case err != nil:
			log.Warn("platform: could not start the plugin's adapter", "error", termsafe.Line(err.Error()), "retry_in", a.wait(attempt))
		case !res.Connected && !res.Retryable:
			log.Error("platform: the plugin's adapter refused to connect for good; the platform stays disconnected (fix its settings and restart the gateway)",
				"code", termsafe.Line(res.ErrorCode), "error", termsafe.Line(res.Error))
			<-ctx.Done()
			return nil
		case !res.Connected:
			log.Warn("platform: the plugin's adapter could not connect", "code", termsafe.Line(res.ErrorCode), "error", termsafe.Line(res.Error), "retry_in", a.wait(attempt))
		default:
			attempt = 0
			a.connected.Store(true)
			log.Info("platform: connected")
			why, final := a.serve(ctx, exited)
			a.connected.Store(false)
			if ctx.Err() != nil {
				a.stop()
				return nil
			}
			if final {
				log.Error("platform: disconnected for good; the platform stays disconnected (restart the gateway once fixed)", "reason", why)
				a.stop()
				<-ctx.Done()
				return nil
			}
			log.Warn("platform: disconnected; reconnecting", "reason", why, "retry_in", a.wait(attempt))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(a.wait(attempt)):
		}
	}
}

func (a *Adapter) wait(attempt int) time.Duration {
	if attempt >= len(a.o.Backoff) {
		attempt = len(a.o.Backoff) - 1
	}
	return a.o.Backoff[attempt]
}

func (a *Adapter) drainDown() {
	for {
		select {
		case <-a.down:
		default:
			return
		}
	}
}

// serve waits while the adapter is connected; it says why it stopped and
// whether the plugin called that final.
func (a *Adapter) serve(ctx context.Context, exited <-chan struct{}) (why string, final bool) {
	select {
	case <-ctx.Done():
		return "the gateway is stopping", false
	case <-exited:
		return "the plugin's process ended (the plugin manager restarts it)", false
	case st := <-a.down:
		why = "the plugin's adapter reported it"
		if st.ErrorCode != "" || st.Error != "" {
			why = termsafe.Line(clip(st.ErrorCode+": "+st.Error, 300))
		}
		return why, st.ErrorCode != "" && !st.Retryable
	}
}

func (a *Adapter) start(ctx context.Context, reconnect bool) (protocol.PlatformStartResult, error) {
	p := a.o.Start
	p.IsReconnect = reconnect
	var res protocol.PlatformStartResult
	cctx, cancel := context.WithTimeout(ctx, a.o.CallTimeout)
	defer cancel()
	raw, err := a.o.Conn.Call(cctx, protocol.MethodPlatformStart, p)
	if err != nil {
		return res, err
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return res, fmt.Errorf("platform.start answered %s: %w", clip(string(raw), 200), err)
	}
	return res, nil
}

// stop disconnects the plugin's adapter, bounded: the plugin may be gone.
func (a *Adapter) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := a.o.Conn.Call(ctx, protocol.MethodPlatformStop, protocol.PlatformNameParams{Name: a.o.Name}); err != nil {
		a.o.Logger.Debug("platform: disconnecting the plugin's adapter failed", "platform", a.o.Name, "error", termsafe.Line(err.Error()))
	}
}

// status is the plugin's ctx.platform_status: a connected adapter that goes
// down ends serve.
func (a *Adapter) status(st protocol.PlatformStatusParams) {
	if st.Connected {
		return
	}
	select {
	case a.down <- st:
	default:
	}
}

// event is the plugin's handle_message(event): checked, then handed to the runner.
func (a *Adapter) event(_ context.Context, p protocol.PlatformEventParams) error {
	a.mu.Lock()
	h, ctx := a.handler, a.runCtx
	a.mu.Unlock()
	if h == nil {
		return fmt.Errorf("platform %s is not being served (the gateway is starting or stopping)", a.o.Name)
	}
	ev, err := toEvent(a.o.Name, p, a.o.Clock())
	if err != nil {
		a.o.Logger.Warn("platform: refused a message from the plugin", "platform", a.o.Name, "plugin", a.o.Plugin, "error", err)
		return err
	}
	h(ctx, ev)
	return nil
}
