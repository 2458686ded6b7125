package agent

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hermes-go/hermes/internal/llm"
)

// ContextEngine decides when a conversation is compacted and how (upstream's
// agent/context_engine.py): the built-in Compressor, or a plugin's engine
// selected by context.engine.
type ContextEngine interface {
	Name() string
	// UpdateModel tells the engine the model and its context window, in tokens.
	UpdateModel(ctx context.Context, model string, contextLength int)
	// UpdateFromResponse records the usage the model reported for a call.
	UpdateFromResponse(ctx context.Context, u llm.Usage)
	// ShouldCompress says whether a request of promptTokens tokens is due.
	ShouldCompress(ctx context.Context, promptTokens int) bool
	// Compress returns the compacted transcript. A non-nil transcript with an
	// error is a partial result the caller may keep (the summary failed, old
	// tool output was still cleared); a nil one leaves the conversation as it is.
	Compress(ctx context.Context, messages []llm.Message, o CompressOptions) ([]llm.Message, error)
}

// CompressOptions are compress()'s keyword arguments.
type CompressOptions struct {
	CurrentTokens int
	Focus         string // /compress <focus>: what the summary should keep
	Force         bool   // /compress: compact even below the threshold, cooldown or not
	// MemoryContext is what the memory providers' on_pre_compress added.
	MemoryContext string
}

// PreCompressor is the memory side of a compaction: on_pre_compress(messages)
// returns text for the compression prompt (the memory providers plug in here).
type PreCompressor interface {
	PreCompress(ctx context.Context, messages []llm.Message) string
}

// SessionForker is the store side of a compaction: the compacted transcript
// continues in a new session whose parent is the old one, so the full history
// stays readable (upstream's parent_session_id chain).
type SessionForker interface {
	ForkSession(ctx context.Context, parentID string) (string, error)
}

// Memory context handed to an engine is capped as upstream caps it.
const (
	memoryContextHead = 4000
	memoryContextTail = 1500
	memoryContextMax  = 6000
)

func capMemoryContext(s string) string {
	r := []rune(s)
	if len(r) <= memoryContextMax {
		return s
	}
	return string(r[:memoryContextHead]) + "\n[...]\n" + string(r[len(r)-memoryContextTail:])
}

// Compaction is what one compaction did.
type Compaction struct {
	Engine         string
	Before, After  int // messages
	TokensBefore   int // estimated
	TokensAfter    int
	OldSessionID   string
	NewSessionID   string // == OldSessionID when the store cannot fork
	Warning        string // a partial result's reason
	NothingChanged bool
}

// Compress compacts s now (/compress [focus]): forced, whatever the threshold.
func (a *Agent) Compress(ctx context.Context, s *Session, focus string) (Compaction, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return a.compact(ctx, s, nil, CompressOptions{Force: true, Focus: focus})
}

// maybeCompact compacts s before a model call when the engine says it is due.
func (a *Agent) maybeCompact(ctx context.Context, s *Session, t *Turn) {
	eng := a.o.Engine
	if eng == nil || !a.o.AutoCompress {
		return
	}
	tokens := max(s.lastPrompt, EstimateTokens(t.requestMessages(s.Messages)))
	if !a.safeShould(ctx, eng, tokens) {
		return
	}
	c, err := a.compact(ctx, s, t, CompressOptions{CurrentTokens: tokens})
	switch {
	case err != nil:
		a.progress(fmt.Sprintf("warning: %v; the turn goes on uncompressed", err))
	case !c.NothingChanged:
		a.progress(c.Line())
	}
}

// Line is the status line a compaction shows.
func (c Compaction) Line() string {
	if c.NothingChanged {
		return "Nothing to compress: the conversation is already within its protected head and tail."
	}
	line := fmt.Sprintf("⟳ context compressed (%s): %d → %d messages, ~%d → ~%d tokens", c.Engine, c.Before, c.After, c.TokensBefore, c.TokensAfter)
	if c.NewSessionID != c.OldSessionID {
		line += fmt.Sprintf("; continued in session %s (parent %s)", c.NewSessionID, c.OldSessionID)
	}
	if c.Warning != "" {
		line += "; " + c.Warning
	}
	return line
}

func (a *Agent) safeShould(ctx context.Context, eng ContextEngine, tokens int) (due bool) {
	defer func() {
		if r := recover(); r != nil {
			a.progress(fmt.Sprintf("warning: context engine %s: should_compress failed: %v", eng.Name(), r))
			due = false
		}
	}()
	return eng.ShouldCompress(ctx, tokens)
}

// compact runs the engine over s's messages and, when it changed them,
// continues s in a child session holding the compacted transcript. t is the
// turn running (nil for /compress between turns).
func (a *Agent) compact(ctx context.Context, s *Session, t *Turn, o CompressOptions) (Compaction, error) {
	eng := a.o.Engine
	c := Compaction{Before: len(s.Messages), OldSessionID: s.ID, NewSessionID: s.ID}
	if eng == nil {
		return c, fmt.Errorf("no context engine is configured")
	}
	c.Engine = eng.Name()
	c.TokensBefore = EstimateTokens(s.Messages)
	if o.CurrentTokens == 0 {
		o.CurrentTokens = max(s.lastPrompt, c.TokensBefore)
	}
	if a.o.PreCompress != nil {
		o.MemoryContext = capMemoryContext(a.o.PreCompress.PreCompress(ctx, slices.Clone(s.Messages)))
	}
	out, err := eng.Compress(ctx, slices.Clone(s.Messages), o)
	if out == nil {
		if err == nil {
			err = fmt.Errorf("returned no messages")
		}
		return c, fmt.Errorf("context engine %s: %w", eng.Name(), err)
	}
	if err != nil {
		c.Warning = err.Error()
	}
	if verr := validTranscript(out); verr != nil {
		return c, fmt.Errorf("context engine %s returned an unusable transcript (%w)", eng.Name(), verr)
	}
	if sameMessages(out, s.Messages) {
		c.NothingChanged = true
		c.After, c.TokensAfter = len(out), c.TokensBefore
		return c, nil
	}
	if f, ok := a.o.Recorder.(SessionForker); ok {
		id, ferr := f.ForkSession(context.WithoutCancel(ctx), s.ID)
		if ferr != nil {
			return c, fmt.Errorf("could not start the session that continues the compacted one: %w", ferr)
		}
		if sw, ok := a.o.Memory.(SessionSwitcher); ok {
			sw.SessionSwitch(context.WithoutCancel(ctx), id, s.ID, false)
		}
		s.ID = id
		userAt := -1
		if t != nil {
			userAt = findUserMessage(out, s.Messages, t.userAt)
		}
		for i, m := range out {
			if i == userAt {
				a.recordTurnUser(ctx, s, m) // the child keeps the turn's identity
			} else {
				a.record(ctx, s, m)
			}
		}
	}
	if t != nil {
		t.userAt = findUserMessage(out, s.Messages, t.userAt)
	}
	s.Messages = out
	c.NewSessionID = s.ID
	c.After, c.TokensAfter = len(out), EstimateTokens(out)
	s.lastPrompt = 0 // the last reported size is the old transcript's
	return c, nil
}

// findUserMessage is where the turn's user message (old[at]) is in the
// compacted transcript: the last user message ending with its text. Not there,
// the turn's pre_llm_call context has nowhere to go (len(out)).
func findUserMessage(out, old []llm.Message, at int) int {
	if at >= len(old) {
		return len(out)
	}
	want := old[at].Content
	for i := len(out) - 1; i >= 0; i-- {
		if out[i].Role == llm.RoleUser && strings.HasSuffix(out[i].Content, want) {
			return i
		}
	}
	return len(out)
}

func validTranscript(ms []llm.Message) error {
	if len(ms) == 0 {
		return fmt.Errorf("no messages")
	}
	calls := map[string]bool{}
	for i, m := range ms {
		switch m.Role {
		case llm.RoleSystem, llm.RoleUser, llm.RoleAssistant:
		case llm.RoleTool:
			if !calls[m.ToolCallID] {
				return fmt.Errorf("message %d answers tool call %q, which no earlier message made", i, m.ToolCallID)
			}
		default:
			return fmt.Errorf("message %d has role %q", i, m.Role)
		}
		for _, c := range m.ToolCalls {
			calls[c.ID] = true
		}
	}
	return nil
}

func sameMessages(a, b []llm.Message) bool {
	return slices.EqualFunc(a, b, func(x, y llm.Message) bool {
		return x.Role == y.Role && x.Content == y.Content && x.ToolCallID == y.ToolCallID && len(x.ToolCalls) == len(y.ToolCalls)
	})
}

// EstimateTokens is a rough size of messages in tokens (4 characters a token,
// a few for each message's framing), for when the provider has not said.
func EstimateTokens(ms []llm.Message) int {
	n := 0
	for _, m := range ms {
		n += messageTokens(m)
	}
	return n
}

func messageTokens(m llm.Message) int {
	chars := len(m.Content)
	for _, c := range m.ToolCalls {
		chars += len(c.Function.Name) + len(c.Function.Arguments)
	}
	return chars/4 + 4
}

func (a *Agent) progress(s string) {
	if a.o.Output != nil {
		a.o.Output.Progress(s)
	}
}
