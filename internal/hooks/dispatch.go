package hooks

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hermes-go/hermes/internal/clock"
	"github.com/hermes-go/hermes/internal/jsonx"
)

const (
	// TelemetryField is the payload key every hook but gateway_platform_event carries.
	TelemetryField = "telemetry_schema_version"
	// ObserverSchemaVersion is the value of TelemetryField.
	ObserverSchemaVersion = "hermes.observer.v1"
	// SuppressionWindow is how long a callback is skipped after it timed out.
	SuppressionWindow = 60 * time.Second
	// MaxAbandoned is how many abandoned, still-running invocations a callback
	// may have before it is skipped outright.
	MaxAbandoned = 3

	errorTextLimit = 200
)

// Callback is one registered hook callback.
type Callback struct {
	PluginID string // owning plugin key
	Name     string // callback qualname, for messages
	// Invoke runs the callback. A nil result means "no result". ctx is
	// cancelled when the dispatcher stops waiting (timeout or caller
	// cancellation); the runtime uses that to stop the plugin's work.
	Invoke func(ctx context.Context, payload map[string]any) (any, error)
	// InvokeEncoded, when set, is used instead of Invoke with the payload encoded
	// as a JSON object, once per Fire for every such callback (an out-of-process
	// plugin only forwards it). Such a callback must return when ctx ends, which
	// lets a lone callback run on the firing goroutine.
	InvokeEncoded func(ctx context.Context, payload []byte) (any, error)
}

// ExceptionError is implemented by errors that carry the plugin's exception
// class name (the runtime provides it).
type ExceptionError interface {
	error
	ExceptionType() string
}

// Options configure a Dispatcher.
type Options struct {
	// Timeout is plugins.hook_callback_timeout, already validated by the
	// caller; 0 disables the bounded path (bounded hooks run unbounded).
	Timeout time.Duration
	Logger  *slog.Logger
	// Now is the clock for suppression windows; default clock.Now.
	Now func() time.Time
}

// Dispatcher fires hooks at registered callbacks. It is safe for concurrent use.
type Dispatcher struct {
	timeout atomic.Int64 // time.Duration; see SetTimeout
	log     *slog.Logger
	now     func() time.Time

	mu    sync.Mutex // serialises writers of hooks
	hooks atomic.Pointer[map[string][]*registration]

	gate       sync.Mutex // guards the fields below and invocation state
	suppressed map[*registration]time.Time
	abandoned  map[*registration]map[*invocation]struct{}
	reported   map[failureKey]struct{}

	// settled, when set (tests), is called after an invocation's bookkeeping
	// is released, so tests can wait for abandoned work without sleeping.
	settled func()
	// checkPayloads makes Fire panic on a payload the catalog does not describe.
	checkPayloads bool
}

// registration is one Register call; its pointer is the callback identity.
type registration struct {
	hook string
	cb   Callback
}

// invocation is one run of a callback that the dispatcher may abandon.
type invocation struct {
	reg       *registration
	callID    string
	running   bool // guarded by Dispatcher.gate
	abandoned bool // guarded by Dispatcher.gate
}

type failureKey struct {
	hook, plugin, name, excType, text string
}

// New returns a Dispatcher.
func New(opts Options) *Dispatcher {
	d := &Dispatcher{
		log:        opts.Logger,
		now:        opts.Now,
		suppressed: map[*registration]time.Time{},
		abandoned:  map[*registration]map[*invocation]struct{}{},
		reported:   map[failureKey]struct{}{},

		checkPayloads: checkPayloadsDefault,
	}
	if d.log == nil {
		d.log = slog.Default()
	}
	if d.now == nil {
		d.now = clock.Now
	}
	d.SetTimeout(opts.Timeout)
	empty := map[string][]*registration{}
	d.hooks.Store(&empty)
	return d
}

// SetTimeout changes the bound of bounded hooks (plugins.hook_callback_timeout,
// already validated; 0 disables it) for the fires that start after it.
func (d *Dispatcher) SetTimeout(timeout time.Duration) { d.timeout.Store(int64(max(timeout, 0))) }

func (d *Dispatcher) callbackTimeout() time.Duration { return time.Duration(d.timeout.Load()) }

// Register adds a callback for hook and returns a function that removes it.
// An unknown hook name is still stored (upstream keeps it too) but logged.
func (d *Dispatcher) Register(hook string, cb Callback) (unregister func()) {
	if cb.Invoke == nil {
		panic("hooks: Register called with a nil Invoke")
	}
	if !Valid(hook) {
		d.log.Warn(fmt.Sprintf("Plugin '%s' registered unknown hook '%s' (valid: %s)",
			cb.PluginID, hook, strings.Join(Names(), ", ")), "plugin", cb.PluginID, "hook", hook)
	}
	reg := &registration{hook: hook, cb: cb}
	d.mu.Lock()
	old := *d.hooks.Load()
	next := maps.Clone(old)
	// A fresh slice: in-flight Fires keep iterating their own snapshot.
	next[hook] = append(append([]*registration(nil), old[hook]...), reg)
	d.hooks.Store(&next)
	d.mu.Unlock()

	var once sync.Once
	return func() {
		once.Do(func() { d.remove(func(r *registration) bool { return r == reg }) })
	}
}

// UnregisterPlugin removes every callback of a plugin and forgets its
// failure reports, so a reloaded plugin warns afresh.
func (d *Dispatcher) UnregisterPlugin(pluginID string) {
	d.remove(func(r *registration) bool { return r.cb.PluginID == pluginID })
	d.gate.Lock()
	for k := range d.reported {
		if k.plugin == pluginID {
			delete(d.reported, k)
		}
	}
	d.gate.Unlock()
}

func (d *Dispatcher) remove(match func(*registration) bool) {
	d.mu.Lock()
	old := *d.hooks.Load()
	next := make(map[string][]*registration, len(old))
	var removed []*registration
	for hook, regs := range old {
		var kept []*registration
		for _, r := range regs {
			if match(r) {
				removed = append(removed, r)
			} else {
				kept = append(kept, r)
			}
		}
		if len(kept) > 0 {
			next[hook] = kept
		}
	}
	d.hooks.Store(&next)
	d.mu.Unlock()

	// Abandoned sets stay: still-running invocations release them when they end.
	d.gate.Lock()
	for _, r := range removed {
		delete(d.suppressed, r)
	}
	d.gate.Unlock()
}

// Has reports whether any callback is registered for hook; fire sites use it
// to skip building expensive payloads.
func (d *Dispatcher) Has(hook Name) bool {
	return len((*d.hooks.Load())[string(hook)]) > 0
}

// Fire calls every callback registered for hook and returns their non-nil
// results in registration order. Callbacks of different plugins run
// concurrently; a plugin's own callbacks run one after another. Errors are
// logged and skipped, except on fail-closed hooks where they become block
// directives. Cancelling ctx makes Fire return what it has collected. In test
// binaries a payload that differs from the catalog's fields panics.
func (d *Dispatcher) Fire(ctx context.Context, hook Name, payload map[string]any) []any {
	if d.checkPayloads {
		mustMatchCatalog(hook, payload)
	}
	regs := (*d.hooks.Load())[string(hook)]
	if len(regs) == 0 {
		return nil
	}
	class, telemetry := Unbounded, true
	if s, ok := index().byName[hook]; ok {
		class, telemetry = s.Class, s.Telemetry
	}
	base := make(map[string]any, len(payload)+1)
	maps.Copy(base, payload)
	if _, set := base[TelemetryField]; telemetry && !set {
		base[TelemetryField] = ObserverSchemaVersion
	}
	f := &firing{
		d:          d,
		ctx:        ctx,
		hook:       string(hook),
		payload:    base,
		regs:       regs,
		failClosed: class == FailClosed,
		bounded:    (class == BoundedFailOpen || class == FailClosed) && d.callbackTimeout() > 0,
	}
	if class == CallerThread {
		return f.runInline()
	}
	return f.runConcurrent()
}

// firing is the state of one Fire call; only the firing goroutine touches it.
type firing struct {
	d          *Dispatcher
	ctx        context.Context
	hook       string
	payload    map[string]any
	regs       []*registration
	failClosed bool
	bounded    bool

	encodeOnce sync.Once
	encoded    []byte
	encodeErr  error
}

// encode returns the payload as JSON, encoded once for every callback that forwards it.
func (f *firing) encode() ([]byte, error) {
	// Without HTML escaping: a payload carrying HTML would grow sixfold on the wire.
	f.encodeOnce.Do(func() { f.encoded, f.encodeErr = jsonx.Marshal(f.payload) })
	return f.encoded, f.encodeErr
}

// call runs one callback with its own copy of the payload (or the shared encoding).
func (f *firing) call(ctx context.Context, cb Callback) (any, error) {
	if cb.InvokeEncoded != nil {
		raw, err := f.encode()
		if err != nil {
			return nil, fmt.Errorf("hook payload is not JSON: %w", err)
		}
		return invokeEncoded(ctx, cb, raw)
	}
	return invoke(ctx, cb, maps.Clone(f.payload))
}

// event reports the end of an invocation or the expiry of its deadline.
type event struct {
	idx      int
	value    any
	err      error
	deadline bool
}

// runInline serves CallerThread hooks: each callback runs on the firing
// goroutine, so when Fire returns none of them is still running. Such hooks
// are observers, never fail-closed, so an interrupt just skips the rest.
func (f *firing) runInline() []any {
	var out []any
	for _, reg := range f.regs {
		if f.ctx.Err() != nil {
			break
		}
		v, err := invoke(f.ctx, reg.cb, maps.Clone(f.payload))
		if r := f.outcome(reg, v, err); r != nil {
			out = append(out, r)
		}
	}
	return out
}

func (f *firing) runConcurrent() []any {
	n := len(f.regs)
	if n == 1 && f.regs[0].cb.InvokeEncoded != nil {
		return f.runLone()
	}
	results := make([]any, n)
	resolved := make([]bool, n)
	live := make([]*invocation, n)
	// Each invocation sends at most two events (end, deadline); the buffer
	// lets abandoned invocations finish without anyone receiving.
	events := make(chan event, 2*n)
	callID := callIdentity(f.payload)

	// Chains group a plugin's callbacks in registration order.
	var chains [][]int
	chainOf := make([]int, n)
	byPlugin := map[string]int{}
	for i, r := range f.regs {
		c, ok := byPlugin[r.cb.PluginID]
		if !ok {
			c = len(chains)
			byPlugin[r.cb.PluginID] = c
			chains = append(chains, nil)
		}
		chains[c] = append(chains[c], i)
		chainOf[i] = c
	}
	pos := make([]int, len(chains))
	pending := n

	resolve := func(i int, v any) {
		results[i], resolved[i], live[i] = v, true, nil
		pending--
	}
	// startNext starts the next runnable callback of chain c, resolving the
	// ones the gate skips.
	startNext := func(c int) {
		for pos[c] < len(chains[c]) {
			if f.ctx.Err() != nil {
				return // left unresolved for the cancellation branch
			}
			i := chains[c][pos[c]]
			pos[c]++
			reg := f.regs[i]
			inv, ok := f.d.admit(reg, callID, f.bounded)
			if !ok {
				var v any
				if f.failClosed {
					v = f.stillRunningBlock()
				}
				resolve(i, v)
				continue
			}
			live[i] = inv
			f.start(i, inv, events)
			return
		}
	}
	for c := range chains {
		startNext(c)
	}

	for pending > 0 {
		select {
		case ev := <-events:
			if resolved[ev.idx] {
				continue
			}
			reg := f.regs[ev.idx]
			if ev.deadline {
				if f.ctx.Err() != nil {
					continue // the caller gave up; handled by the Done branch
				}
				f.d.abandon(live[ev.idx], true)
				f.d.log.Warn(fmt.Sprintf("Hook '%s' callback %s timed out after %s — skipping",
					f.hook, callbackName(reg), f.d.callbackTimeout()), "plugin", reg.cb.PluginID, "hook", f.hook)
				var v any
				if f.failClosed {
					v = f.stillRunningBlock()
				}
				resolve(ev.idx, v)
			} else {
				resolve(ev.idx, f.outcome(reg, ev.value, ev.err))
			}
			startNext(chainOf[ev.idx])
		case <-f.ctx.Done():
			// Results that already arrived count as collected.
			for drained := false; !drained; {
				select {
				case ev := <-events:
					if !resolved[ev.idx] && !ev.deadline {
						resolve(ev.idx, f.outcome(f.regs[ev.idx], ev.value, ev.err))
					}
				default:
					drained = true
				}
			}
			for i := range f.regs {
				if resolved[i] {
					continue
				}
				if live[i] != nil {
					f.d.abandon(live[i], false)
				}
				var v any
				if f.failClosed {
					v = f.stillRunningBlock()
				}
				resolve(i, v)
			}
		}
	}

	out := results[:0]
	for _, v := range results {
		if v != nil {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// start runs one invocation on its own goroutine so the firing goroutine can
// stop waiting for it at any time.
func (f *firing) start(i int, inv *invocation, events chan<- event) {
	var (
		ctx    context.Context
		cancel context.CancelFunc
		stop   = func() bool { return true }
	)
	if f.bounded {
		ctx, cancel = context.WithTimeout(f.ctx, f.d.callbackTimeout())
		stop = context.AfterFunc(ctx, func() { events <- event{idx: i, deadline: true} })
	} else {
		ctx, cancel = context.WithCancel(f.ctx)
	}
	cb := inv.reg.cb
	go func() {
		defer cancel()
		v, err := f.call(ctx, cb)
		stop()
		ev := event{idx: i, value: v, err: err}
		if ctx.Err() != nil {
			// It returned because its time was up (or the caller gave up):
			// whatever it returned is not a decision.
			ev = event{idx: i, deadline: true}
		}
		// Queue the result before releasing the slot: once the slot is free
		// the result is already collectable, even by a cancelled Fire.
		events <- ev
		f.d.finish(inv)
	}()
}

// runLone serves the common case of one out-of-process callback on the firing
// goroutine: it returns when its deadline or the caller's ctx ends, so no worker
// goroutine is needed to stop waiting for it, and two hand-offs are saved.
func (f *firing) runLone() []any {
	reg := f.regs[0]
	inv, ok := f.d.admit(reg, callIdentity(f.payload), f.bounded)
	if !ok {
		if f.failClosed {
			return []any{f.stillRunningBlock()}
		}
		return nil
	}
	ctx, cancel := f.ctx, context.CancelFunc(func() {})
	if f.bounded {
		ctx, cancel = context.WithTimeout(f.ctx, f.d.callbackTimeout())
	}
	v, err := f.call(ctx, reg.cb)
	timedOut := ctx.Err() != nil && f.ctx.Err() == nil
	cancel()
	var res any
	switch {
	case timedOut:
		f.d.abandon(inv, true)
		f.d.log.Warn(fmt.Sprintf("Hook '%s' callback %s timed out after %s — skipping",
			f.hook, callbackName(reg), f.d.callbackTimeout()), "plugin", reg.cb.PluginID, "hook", f.hook)
		if f.failClosed {
			res = f.stillRunningBlock()
		}
	case f.ctx.Err() != nil:
		if f.failClosed {
			res = f.stillRunningBlock()
		}
	default:
		res = f.outcome(reg, v, err)
	}
	f.d.finish(inv)
	if res == nil {
		return nil
	}
	return []any{res}
}

// outcome turns a finished invocation into its result slot value.
func (f *firing) outcome(reg *registration, v any, err error) any {
	if err == nil {
		return v
	}
	f.d.report(f.hook, reg, f.payload, err)
	if !f.failClosed {
		return nil
	}
	// A guard that failed made no decision: veto, naming the guard and error.
	return map[string]any{
		"action": "block",
		"message": fmt.Sprintf("%s plugin callback %s raised %s: %s",
			f.hook, callbackName(reg), exceptionType(err), truncateRunes(err.Error(), errorTextLimit)),
	}
}

func (f *firing) stillRunningBlock() map[string]any {
	return map[string]any{
		"action":  "block",
		"message": f.hook + " plugin callback timed out or is still running",
	}
}

// admit decides whether a callback may start. Only bounded hooks are gated,
// as upstream: suppression after a timeout is per callback (a hung callback
// keeps its back-off whatever call it is for), while the still-running check
// is per call identity so concurrent tool calls do not collapse into one.
func (d *Dispatcher) admit(reg *registration, callID string, bounded bool) (*invocation, bool) {
	d.gate.Lock()
	defer d.gate.Unlock()
	if !bounded {
		return &invocation{reg: reg, callID: callID, running: true}, true
	}
	name := callbackName(reg)
	until, suppressed := d.suppressed[reg]
	stillRunning := false
	for inv := range d.abandoned[reg] {
		if inv.callID == callID {
			stillRunning = true
			break
		}
	}
	if (suppressed && d.now().Before(until)) || stillRunning {
		d.log.Warn(fmt.Sprintf("Hook '%s' callback %s skipped after previous timeout or while still running",
			reg.hook, name), "plugin", reg.cb.PluginID, "hook", reg.hook)
		return nil, false
	}
	if n := len(d.abandoned[reg]); n >= MaxAbandoned {
		d.log.Warn(fmt.Sprintf("Hook '%s' callback %s (plugin %s) skipped: %d abandoned invocation(s) still running; "+
			"the plugin is hung, fix or disable it (retried when one finishes)", reg.hook, name, reg.cb.PluginID, n),
			"plugin", reg.cb.PluginID, "hook", reg.hook)
		return nil, false
	}
	delete(d.suppressed, reg)
	return &invocation{reg: reg, callID: callID, running: true}, true
}

// abandon records that the dispatcher stopped waiting for inv; a timeout
// also starts the callback's suppression window.
func (d *Dispatcher) abandon(inv *invocation, timedOut bool) {
	d.gate.Lock()
	defer d.gate.Unlock()
	if timedOut {
		d.suppressed[inv.reg] = d.now().Add(SuppressionWindow)
	}
	// It may have ended between the deadline and this lock: then there is
	// nothing running to count against the callback.
	if !inv.running {
		return
	}
	inv.abandoned = true
	set := d.abandoned[inv.reg]
	if set == nil {
		set = map[*invocation]struct{}{}
		d.abandoned[inv.reg] = set
	}
	set[inv] = struct{}{}
}

// finish releases inv's slot when its callback returns.
func (d *Dispatcher) finish(inv *invocation) {
	d.gate.Lock()
	inv.running = false
	if inv.abandoned {
		set := d.abandoned[inv.reg]
		delete(set, inv)
		if len(set) == 0 {
			delete(d.abandoned, inv.reg)
		}
	}
	settled := d.settled
	d.gate.Unlock()
	if settled != nil {
		settled()
	}
}

// report logs a callback failure: the first of a kind at WARNING naming the
// fields the hook provides (a mis-declared callback fails identically on every
// call and would flood the log), identical repeats at DEBUG.
func (d *Dispatcher) report(hook string, reg *registration, payload map[string]any, err error) {
	excType := exceptionType(err)
	text := truncateRunes(err.Error(), errorTextLimit)
	key := failureKey{hook: hook, plugin: reg.cb.PluginID, name: reg.cb.Name, excType: excType, text: text}
	d.gate.Lock()
	_, seen := d.reported[key]
	d.reported[key] = struct{}{}
	d.gate.Unlock()
	name := callbackName(reg)
	if seen {
		d.log.Debug(fmt.Sprintf("Hook '%s' callback %s (plugin %s) raised again: %s", hook, name, reg.cb.PluginID, err),
			"plugin", reg.cb.PluginID, "hook", hook)
		return
	}
	fields := "no fields"
	if len(payload) > 0 {
		keys := make([]string, 0, len(payload))
		for k := range payload {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		fields = strings.Join(keys, ", ")
	}
	// The plugin is named: a raising pre_tool_call guard blocks every call, and the
	// user must be able to tell which plugin's guard it is.
	d.log.Warn(fmt.Sprintf("Hook '%s' callback %s (plugin %s) raised: %s (hook provides: %s; identical failures are logged at DEBUG from now on)",
		hook, name, reg.cb.PluginID, err, fields), "plugin", reg.cb.PluginID, "hook", hook, "exception", excType)
}

// invoke calls a callback, turning a panic (an in-process Go plugin) into an
// error so one callback cannot take the host down.
func invoke(ctx context.Context, cb Callback, payload map[string]any) (v any, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, panicError{r}
		}
	}()
	return cb.Invoke(ctx, payload)
}

func invokeEncoded(ctx context.Context, cb Callback, payload []byte) (v any, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, panicError{r}
		}
	}()
	return cb.InvokeEncoded(ctx, payload)
}

type panicError struct{ value any }

func (p panicError) Error() string         { return fmt.Sprint(p.value) }
func (p panicError) ExceptionType() string { return "panic" }

func exceptionType(err error) string {
	var ee ExceptionError
	if errors.As(err, &ee) {
		if t := ee.ExceptionType(); t != "" {
			return t
		}
	}
	return "Error"
}

func callbackName(reg *registration) string {
	if reg.cb.Name != "" {
		return reg.cb.Name
	}
	return reg.cb.PluginID + ".<callback>"
}

// callIdentity tells concurrent calls of one hook apart. Not api_request_id:
// one request carries many tool calls.
func callIdentity(payload map[string]any) string {
	for _, k := range [...]string{"tool_call_id", "turn_id"} {
		if s, ok := payload[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// truncateRunes cuts s to n characters, counting code points as Python does.
func truncateRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}
