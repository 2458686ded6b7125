package memory

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/memory/memctx"
	"github.com/hermes-go/hermes/internal/termsafe"
)

// Bounds on calls into an external provider: none may hold a turn up for
// long, and none may fail it.
const (
	PrefetchTimeout = 8 * time.Second  // upstream's _EXTERNAL_PREFETCH_TIMEOUT_S
	CallTimeout     = 10 * time.Second // every other call
	DrainTimeout    = 5 * time.Second  // background syncs at Close
)

// Options configure a Manager.
type Options struct {
	Store    *Store
	Settings config.MemorySettings
	// External is the provider memory.provider selected (nil: built-in only).
	External   Provider
	HermesHome string
	Platform   string
	Logger     *slog.Logger
	// Warn shows a provider's failure to the user (nil: logged only).
	Warn func(msg string)
	// Redact masks secrets in what is handed to the provider (nil: as is).
	Redact          func(string) string
	PrefetchTimeout time.Duration // 0: PrefetchTimeout
	CallTimeout     time.Duration // 0: CallTimeout
}

// Manager runs the built-in memory and at most one external provider around
// the agent's turns. A provider that fails, hangs or answers nonsense costs at
// most its bound and a warning; the turn goes on.
type Manager struct {
	o Options

	mu     sync.Mutex
	inited map[string]bool // sessions initialize() was called for
	warned map[string]bool // one warning per method, not one per turn
	bg     sync.WaitGroup
	closed bool
}

// New returns a Manager.
func New(o Options) *Manager {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.PrefetchTimeout <= 0 {
		o.PrefetchTimeout = PrefetchTimeout
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = CallTimeout
	}
	if o.Redact == nil {
		o.Redact = func(s string) string { return s }
	}
	return &Manager{o: o, inited: map[string]bool{}, warned: map[string]bool{}}
}

// SetExternal makes p the external provider. Call it before the first turn.
func (m *Manager) SetExternal(p Provider) { m.o.External = p }

// External is the active external provider (nil: built-in only).
func (m *Manager) External() Provider { return m.o.External }

// Store is the built-in memory.
func (m *Manager) Store() *Store { return m.o.Store }

func (m *Manager) fail(method string, err error) {
	name := m.o.External.Name()
	msg := fmt.Sprintf("memory provider %s: %s failed: %s; the turn goes on without it", name, method, termsafe.Line(err.Error()))
	m.o.Logger.Warn(msg)
	m.mu.Lock()
	first := !m.warned[method]
	m.warned[method] = true
	m.mu.Unlock()
	if first && m.o.Warn != nil {
		m.o.Warn(msg)
	}
}

// bounded runs fn with a deadline of d, detached from ctx's cancellation only
// when ctx is already done (a session ending after Ctrl-C still syncs).
func (m *Manager) bounded(ctx context.Context, d time.Duration, method string, fn func(ctx context.Context) error) bool {
	cctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	err := fn(cctx)
	if err == nil {
		return true
	}
	if errors.Is(cctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("no answer within %s", d)
	}
	m.fail(method, err)
	return false
}

// Platform is the manager's turns as seen from one platform: the gateway's
// agents share one manager (one provider per process) and each tells the
// provider its own platform.
type Platform struct {
	m    *Manager
	name string
}

// ForPlatform is the manager for turns that come from platform name.
func (m *Manager) ForPlatform(name string) Platform { return Platform{m: m, name: name} }

// BeforeTurn is Manager.BeforeTurn with the view's platform.
func (p Platform) BeforeTurn(ctx context.Context, sessionID string, turn int, userText string) string {
	return p.m.beforeTurn(ctx, p.name, sessionID, turn, userText)
}

// SessionSwitch is Manager.SessionSwitch.
func (p Platform) SessionSwitch(ctx context.Context, newID, parentID string, reset bool) {
	p.m.SessionSwitch(ctx, newID, parentID, reset)
}

// AfterTurn is Manager.AfterTurn.
func (p Platform) AfterTurn(ctx context.Context, sessionID, userText, assistantText string) {
	p.m.AfterTurn(ctx, sessionID, userText, assistantText)
}

func (m *Manager) ensureInit(ctx context.Context, platform, sessionID string) bool {
	m.mu.Lock()
	done := m.inited[sessionID]
	m.inited[sessionID] = true
	m.mu.Unlock()
	if done {
		return true
	}
	return m.bounded(ctx, m.o.CallTimeout, "initialize", func(ctx context.Context) error {
		return m.o.External.Initialize(ctx, sessionID, map[string]any{
			"hermes_home": m.o.HermesHome, "platform": platform, "agent_context": "primary",
		})
	})
}

// BeforeTurn runs on_turn_start and prefetch (bounded) and returns the
// <memory-context> block for this turn's request ("" when there is no recall).
func (m *Manager) BeforeTurn(ctx context.Context, sessionID string, turn int, userText string) string {
	return m.beforeTurn(ctx, m.o.Platform, sessionID, turn, userText)
}

func (m *Manager) beforeTurn(ctx context.Context, platform, sessionID string, turn int, userText string) string {
	if m.o.External == nil {
		return ""
	}
	m.ensureInit(ctx, platform, sessionID)
	query := m.o.Redact(userText)
	m.bounded(ctx, m.o.CallTimeout, "on_turn_start", func(ctx context.Context) error {
		return m.o.External.OnTurnStart(ctx, turn, query, map[string]any{"platform": platform})
	})
	var recall any
	if !m.bounded(ctx, m.o.PrefetchTimeout, "prefetch", func(ctx context.Context) error {
		var err error
		recall, err = m.o.External.Prefetch(ctx, query, sessionID)
		return err
	}) {
		return ""
	}
	switch r := recall.(type) {
	case nil:
		return ""
	case string:
		return memctx.Block(r)
	default:
		m.fail("prefetch", fmt.Errorf("returned %T, not a string; the recall is ignored", recall))
		return ""
	}
}

// AfterTurn hands the finished turn to the provider (sync_turn) and asks it
// to prepare the next recall (queue_prefetch), in the background: the reply
// is not held up. Close waits for them.
func (m *Manager) AfterTurn(ctx context.Context, sessionID, userText, assistantText string) {
	if m.o.External == nil {
		return
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.bg.Add(1)
	m.mu.Unlock()
	user, assistant := m.o.Redact(userText), m.o.Redact(memctx.Scrub(assistantText))
	ctx = context.WithoutCancel(ctx)
	go func() {
		defer m.bg.Done()
		if b, ok := m.o.External.(afterTurner); ok && b.BatchesAfterTurn() {
			var qerr error
			m.bounded(ctx, m.o.CallTimeout, "sync_turn", func(ctx context.Context) error {
				serr, q, err := b.AfterTurn(ctx, user, assistant, sessionID)
				if err != nil {
					return err
				}
				qerr = q
				return serr
			})
			if qerr != nil {
				m.fail("queue_prefetch", qerr)
			}
			return
		}
		m.bounded(ctx, m.o.CallTimeout, "sync_turn", func(ctx context.Context) error {
			return m.o.External.SyncTurn(ctx, user, assistant, sessionID)
		})
		m.bounded(ctx, m.o.CallTimeout, "queue_prefetch", func(ctx context.Context) error {
			return m.o.External.QueuePrefetch(ctx, user, sessionID)
		})
	}()
}

// afterTurner is a provider that takes sync_turn and queue_prefetch in one
// round trip (Remote over the Python bridge).
type afterTurner interface {
	BatchesAfterTurn() bool
	AfterTurn(ctx context.Context, user, assistant, sessionID string) (syncErr, queueErr, err error)
}

// SystemPrompt is the memory part of a new session's system prompt: the
// built-in snapshot and, when tools are offered, the provider's block.
func (m *Manager) SystemPrompt(ctx context.Context, withProvider bool) string {
	var parts []string
	if m.o.Store != nil {
		if b := m.o.Store.PromptBlock(m.o.Settings.MemoryEnabled, m.o.Settings.UserProfileEnabled); b != "" {
			parts = append(parts, b)
		}
	}
	if m.o.External != nil && withProvider {
		var block any
		if m.bounded(ctx, m.o.CallTimeout, "system_prompt_block", func(ctx context.Context) error {
			var err error
			block, err = m.o.External.SystemPromptBlock(ctx)
			return err
		}) {
			if s, ok := block.(string); ok && strings.TrimSpace(s) != "" {
				parts = append(parts, clipRunes(termsafe.Text(strings.TrimSpace(s)), 4000))
			} else if block != nil && !ok {
				m.fail("system_prompt_block", fmt.Errorf("returned %T, not a string", block))
			}
		}
	}
	return strings.Join(parts, "\n\n")
}

// MemoryWrite mirrors a built-in memory write to the provider (on_memory_write).
func (m *Manager) MemoryWrite(ctx context.Context, action, target, content string) {
	if m.o.External == nil {
		return
	}
	m.bounded(ctx, m.o.CallTimeout, "on_memory_write", func(ctx context.Context) error {
		return m.o.External.OnMemoryWrite(ctx, action, target, m.o.Redact(content))
	})
}

// SessionSwitch tells the provider the conversation moved to another session
// (/new, /resume, a compression's child session).
func (m *Manager) SessionSwitch(ctx context.Context, newID, parentID string, reset bool) {
	if m.o.External == nil {
		return
	}
	if !reset {
		// A continuation (compaction, resume) is the provider's current
		// session now: it was told so, and is not initialised a second time.
		m.mu.Lock()
		if m.inited[parentID] {
			m.inited[newID] = true
		}
		m.mu.Unlock()
	}
	m.bounded(ctx, m.o.CallTimeout, "on_session_switch", func(ctx context.Context) error {
		return m.o.External.OnSessionSwitch(ctx, newID, parentID, reset)
	})
}

// SessionEnd is a real session boundary (exit, reset): on_session_end.
func (m *Manager) SessionEnd(ctx context.Context, sessionID string, messages []map[string]any) {
	if m.o.External == nil {
		return
	}
	m.mu.Lock()
	started := m.inited[sessionID]
	delete(m.inited, sessionID) // a session resumed later (the gateway's evicted one) initializes again
	m.mu.Unlock()
	if !started {
		return // no turn ran: nothing to end
	}
	m.drain() // the last turn's sync comes before the end
	m.bounded(ctx, m.o.CallTimeout, "on_session_end", func(ctx context.Context) error {
		return m.o.External.OnSessionEnd(ctx, m.redactMessages(messages))
	})
}

// PreCompress asks the provider what to keep before a compaction; its text
// goes into the compression prompt.
func (m *Manager) PreCompress(ctx context.Context, messages []map[string]any) string {
	if m.o.External == nil {
		return ""
	}
	var out string
	m.bounded(ctx, m.o.CallTimeout, "on_pre_compress", func(ctx context.Context) error {
		var err error
		out, err = m.o.External.OnPreCompress(ctx, m.redactMessages(messages))
		return err
	})
	return clipRunes(termsafe.Text(out), memctx.MaxRecallHead+memctx.MaxRecallTail)
}

func (m *Manager) redactMessages(ms []map[string]any) []map[string]any {
	out := make([]map[string]any, len(ms))
	for i, msg := range ms {
		c := make(map[string]any, len(msg))
		for k, v := range msg {
			if s, ok := v.(string); ok && k == "content" {
				v = m.o.Redact(memctx.Scrub(s))
			}
			c[k] = v
		}
		out[i] = c
	}
	return out
}

// Close waits (bounded) for the background syncs and shuts the provider down.
func (m *Manager) Close(ctx context.Context) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.closed = true
	m.mu.Unlock()
	if m.o.External == nil {
		return
	}
	m.drain()
	m.bounded(context.WithoutCancel(ctx), m.o.CallTimeout, "shutdown", m.o.External.Shutdown)
}

// drain waits, at most DrainTimeout, for the background syncs.
func (m *Manager) drain() {
	done := make(chan struct{})
	go func() { m.bg.Wait(); close(done) }()
	t := time.NewTimer(DrainTimeout)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		m.o.Logger.Warn("memory provider: background syncs still running; not waiting for them", "provider", m.o.External.Name())
	}
}

func clipRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// Flush waits for the background sync_turn and queue_prefetch calls started
// so far (each is bounded by CallTimeout); a benchmark's turn ends there.
func (m *Manager) Flush() { m.bg.Wait() }
