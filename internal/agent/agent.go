// Package agent runs conversation turns: it sends the history to the model,
// runs the tools the model asks for through the tool pipeline, and fires every
// agent hook at its upstream fire site with upstream's payload fields.
package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/hermes-go/hermes/internal/clock"
	"github.com/hermes-go/hermes/internal/hooks"
	"github.com/hermes-go/hermes/internal/jsonx"
	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/internal/memory/memctx"
	"github.com/hermes-go/hermes/internal/tools"
)

// Hooks is the part of the hook dispatcher the agent fires.
type Hooks interface {
	Fire(ctx context.Context, hook hooks.Name, payload map[string]any) []any
	Has(hook hooks.Name) bool
}

// Recorder persists what a session says as it is said, so a crash mid-turn
// loses nothing already said. The CLI backs it with the session store.
type Recorder interface {
	AppendMessage(ctx context.Context, sessionID string, m llm.Message) error
	RecordToolCall(ctx context.Context, sessionID string, rec ToolRecord) error
}

// TurnRecorder, when a Recorder has it, records a turn's own user message
// (the one Run was given, and its copy in a compacted transcript) apart from
// the others: the gateway stores it with the delivery it answers, so a
// redelivery can find it by identity.
type TurnRecorder interface {
	AppendTurnMessage(ctx context.Context, sessionID string, m llm.Message) error
}

// ToolRecord is one tool call as it ran.
type ToolRecord struct {
	CallID   string
	Name     string
	Args     string // the arguments as the model sent them
	Result   string
	Status   tools.Status
	Error    string
	Duration time.Duration
}

// Output receives what the user should see while a turn runs.
type Output interface {
	// Text is a streamed piece of the assistant's answer.
	Text(s string)
	// Progress is a status line (a tool starting, a retry); shown on stderr.
	Progress(s string)
}

// Options configure an Agent.
type Options struct {
	Client   llm.Client
	Model    string
	Provider string
	BaseURL  string
	// Pipeline runs tool calls (registry, pre/post hooks, approval); the model is
	// offered the tools its tool set (Pipeline.Enabled) allows.
	Pipeline *tools.Pipeline
	Hooks    Hooks  // may be nil
	Platform string // "cli"
	Recorder Recorder
	Output   Output
	Stream   bool
	// SystemPrompt is the base system prompt; SystemSections renders the plugin
	// sections (§11.2) once per new session.
	SystemPrompt   string
	SystemSections func(ctx context.Context, info map[string]any) string
	// MaxIterations bounds model calls in one turn (default 90, upstream's agent.max_turns).
	MaxIterations int
	// ToolResultCap bounds a tool result handed to the model, in bytes (default 100 000).
	ToolResultCap int
	// Redact masks secrets in tool results before the model (and the session
	// store) sees them, as upstream does; nil passes them as they are.
	Redact func(string) string
	// MaxTokens and Temperature shape every request (0/nil = provider default).
	MaxTokens   int
	Temperature *float64
	// HookOutputDir is where oversized pre_llm_call context spills
	// ($HERMES_HOME/hook_outputs); empty cuts it instead.
	HookOutputDir string
	// Middleware, when set, runs the llm_request and llm_execution chains.
	Middleware LLMMiddleware
	// Engine compacts conversations (the built-in Compressor or a plugin's);
	// nil never compacts. AutoCompress lets it act before model calls
	// (compression.enabled); /compress works either way.
	Engine       ContextEngine
	AutoCompress bool
	// PreCompress, when set, adds the memory providers' text to a compaction.
	PreCompress PreCompressor
	// Memory is the memory provider's part of a turn (nil: no external provider).
	Memory Memory
	Now    func() time.Time
}

// Memory is what a turn asks of the memory: recall before the first model
// call, the finished turn handed over after the reply. It never fails a turn.
type Memory interface {
	// BeforeTurn runs on_turn_start and prefetch and returns the
	// <memory-context> block for this turn's requests ("" for none).
	BeforeTurn(ctx context.Context, sessionID string, turn int, userText string) string
	// AfterTurn runs sync_turn and queue_prefetch (in the background).
	AfterTurn(ctx context.Context, sessionID, userText, assistantText string)
}

// SessionSwitcher is the part of a Memory told that compaction continues a
// session in a child (on_session_switch with the parent's id, reset false).
type SessionSwitcher interface {
	SessionSwitch(ctx context.Context, newID, parentID string, reset bool)
}

// LLMMiddleware is the plugin middleware around model calls (§11.4).
type LLMMiddleware interface {
	// Request may rewrite the request body before it is sent.
	Request(ctx context.Context, req map[string]any, meta map[string]any) map[string]any
	// Execute wraps the call itself; next performs it.
	Execute(ctx context.Context, req map[string]any, meta map[string]any, next func(map[string]any) (any, error)) (any, error)
}

// Agent runs turns. One Agent may serve many sessions, one turn at a time each.
type Agent struct {
	o          Options
	cur        atomic.Pointer[attemptState]
	maxRetries atomic.Int32
	specs      sync.Map // specKey → llm.ToolSpec, encoded
	specCount  atomic.Int32
}

// New returns an Agent.
func New(o Options) *Agent {
	if o.Platform == "" {
		o.Platform = "cli"
	}
	if o.MaxIterations <= 0 {
		o.MaxIterations = 90
	}
	if o.ToolResultCap <= 0 {
		o.ToolResultCap = 100_000
	}
	if o.Now == nil {
		o.Now = clock.Now
	}
	return &Agent{o: o}
}

// SetClient sets the model client (after ObserveAttempts wired its Config).
func (a *Agent) SetClient(c llm.Client) { a.o.Client = c }

// SetEngine sets the context engine; auto lets it compact before model calls.
func (a *Agent) SetEngine(e ContextEngine, auto bool) { a.o.Engine, a.o.AutoCompress = e, auto }

// SetRecorder sets where messages are persisted.
func (a *Agent) SetRecorder(r Recorder) { a.o.Recorder = r }

// Streams reports whether answers are streamed to the Output.
func (a *Agent) Streams() bool { return a.o.Stream }

// Model is the model the agent talks to.
func (a *Agent) Model() string { return a.o.Model }

// Session is one conversation.
type Session struct {
	ID       string
	Messages []llm.Message
	// Turns counts the turns run in this process; Resumed marks a session
	// continued from the store (its first turn here is not its first ever).
	Turns   int
	Resumed bool
	// lastPrompt is the size of the transcript as the model last reported it
	// (prompt + completion tokens of the last call).
	lastPrompt int
	mu         sync.Mutex
}

// NewSession starts a conversation with the system prompt in place.
func (a *Agent) NewSession(ctx context.Context, id string) *Session {
	s := &Session{ID: id}
	if sp := a.systemPrompt(ctx, id); sp != "" {
		m := llm.Message{Role: "system", Content: sp}
		s.Messages = append(s.Messages, m)
		a.record(ctx, s, m)
	}
	return s
}

func (a *Agent) systemPrompt(ctx context.Context, sessionID string) string {
	parts := []string{}
	if a.o.SystemPrompt != "" {
		parts = append(parts, a.o.SystemPrompt)
	}
	if a.o.SystemSections != nil {
		cwd, _ := os.Getwd()
		info := map[string]any{"session_id": sessionID, "model": a.o.Model, "provider": a.o.Provider,
			"platform": a.o.Platform, "profile_name": "", "cwd": cwd}
		if sec := a.o.SystemSections(ctx, info); sec != "" {
			parts = append(parts, sec)
		}
	}
	return strings.Join(parts, "\n\n")
}

// Turn is what one turn produced.
type Turn struct {
	ID          string
	Final       string        // the assistant's final answer (after transform_llm_output)
	Added       []llm.Message // every message this turn appended, in order
	ToolCalls   []ToolRecord
	Interrupted bool
	APICalls    int
	// Usage sums the token counts the model reported for this turn's calls.
	Usage llm.Usage
	// Streamed is true when the final answer reached the Output as a stream.
	Streamed bool

	userAt  int    // the index of this turn's user message in the session
	context string // what pre_llm_call added to it, for this turn's requests only
	memory  string // the <memory-context> block, for this turn's requests only
	partial string // the text streamed by a model call that then failed
}

// requestMessages is the history as this turn sends it: the session's messages
// with the pre_llm_call context appended to the turn's user message.
func (t *Turn) requestMessages(history []llm.Message) []llm.Message {
	if (t.context == "" && t.memory == "") || t.userAt >= len(history) {
		return history
	}
	out := slices.Clone(history)
	for _, extra := range []string{t.context, t.memory} {
		if extra != "" {
			out[t.userAt].Content += "\n\n" + extra
		}
	}
	return out
}

// ErrInterrupted is returned when the caller cancelled the turn.
var ErrInterrupted = errors.New("interrupted")

// Run runs one turn: the user's message, model calls and tool calls until the
// model answers without asking for tools. Whatever happens, everything already
// said stays in s and in the recorder.
func (a *Agent) Run(ctx context.Context, s *Session, userText string) (*Turn, error) {
	return a.run(ctx, s, userText, -1)
}

// run is Run; stored ≥ 0 is RunStored's turn, whose user message is
// s.Messages[stored] already.
func (a *Agent) run(ctx context.Context, s *Session, userText string, stored int) (*Turn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if stored >= len(s.Messages) {
		return nil, fmt.Errorf("agent: no stored message %d to continue the turn from (the session has %d)", stored, len(s.Messages))
	}
	if stored >= 0 {
		userText = s.Messages[stored].Content
	}
	t := &Turn{ID: newID()}
	first := s.Turns == 0 && !s.Resumed
	s.Turns++
	if first {
		a.fire(ctx, hooks.HookOnSessionStart, map[string]any{"session_id": s.ID, "model": a.o.Model, "platform": a.o.Platform})
	}

	// pre_llm_call: plugin context goes into the user message, never the system
	// prompt, and only into the copy this turn sends (upstream: it is ephemeral):
	// stored, it would be sent again every later turn, piling up, and show in
	// session titles and search.
	if a.has(hooks.HookPreLLMCall) {
		res := a.fire(ctx, hooks.HookPreLLMCall, map[string]any{
			"session_id": s.ID, "task_id": s.ID, "turn_id": t.ID, "user_message": userText,
			"conversation_history": messagesAsMaps(s.Messages), "is_first_turn": first, "model": a.o.Model,
			"platform": a.o.Platform, "parent_session_id": nil, "sender_id": nil,
		})
		extra := hooks.LLMContext(res)
		a.spill(s.ID, &extra)
		t.context = extra.Text()
	}
	// Recalled memory goes the same way: into this turn's requests, never stored.
	if a.o.Memory != nil {
		t.memory = a.o.Memory.BeforeTurn(ctx, s.ID, s.Turns, userText)
	}
	if stored >= 0 {
		t.userAt = stored
	} else {
		t.userAt = len(s.Messages)
		m := llm.Message{Role: "user", Content: userText}
		s.Messages = append(s.Messages, m)
		t.Added = append(t.Added, m)
		a.recordTurnUser(ctx, s, m)
	}

	final, err := a.loop(ctx, s, t, userText)
	completed := err == nil
	interrupted := errors.Is(err, ErrInterrupted)
	reason := "completed"
	switch {
	case interrupted:
		reason = "interrupted"
		t.Interrupted = true
		a.fire(context.WithoutCancel(ctx), hooks.HookAgentLoopStopped, map[string]any{
			"session_key": s.ID, "platform": a.o.Platform, "reason": "interrupt", "invalidation_reason": nil})
	case err != nil:
		reason = "error"
	}
	if completed {
		t.Final = final
		if a.o.Memory != nil {
			a.o.Memory.AfterTurn(ctx, s.ID, userText, final)
		}
	}
	a.fire(context.WithoutCancel(ctx), hooks.HookOnSessionEnd, map[string]any{
		"session_id": s.ID, "task_id": s.ID, "turn_id": t.ID, "completed": completed, "failed": err != nil && !interrupted,
		"interrupted": interrupted, "turn_exit_reason": reason, "model": a.o.Model, "platform": a.o.Platform,
	})
	return t, err
}

func (a *Agent) loop(ctx context.Context, s *Session, t *Turn, userText string) (string, error) {
	specs := a.toolSpecs(ctx)
	for iter := 0; iter < a.o.MaxIterations; iter++ {
		if ctx.Err() != nil {
			return "", ErrInterrupted
		}
		a.maybeCompact(ctx, s, t)
		resp, err := a.call(ctx, s, t, userText, specs, iter)
		if err != nil {
			a.keepPartial(ctx, s, t)
			if ctx.Err() != nil {
				return "", ErrInterrupted
			}
			return "", err
		}
		t.Usage.PromptTokens += resp.Usage.PromptTokens
		t.Usage.CompletionTokens += resp.Usage.CompletionTokens
		t.Usage.TotalTokens += resp.Usage.TotalTokens
		s.lastPrompt = resp.Usage.PromptTokens + resp.Usage.CompletionTokens
		if a.o.Engine != nil {
			a.o.Engine.UpdateFromResponse(ctx, resp.Usage)
		}
		msg := resp.Message
		msg.Role = "assistant"
		if len(msg.ToolCalls) == 0 {
			text := msg.Content
			if a.o.Memory != nil {
				text = memctx.Scrub(text) // an echoed recall is neither shown nor stored
			}
			text = a.transformOutput(ctx, s, text)
			msg.Content = text
			a.add(ctx, s, t, msg)
			if a.has(hooks.HookPostLLMCall) { // the history as maps only for a listener
				a.fire(ctx, hooks.HookPostLLMCall, map[string]any{
					"session_id": s.ID, "task_id": s.ID, "turn_id": t.ID, "user_message": userText,
					"assistant_response": text, "conversation_history": messagesAsMaps(s.Messages),
					"model": a.o.Model, "platform": a.o.Platform,
				})
			}
			return text, nil
		}
		a.add(ctx, s, t, msg)
		for _, tc := range msg.ToolCalls {
			if ctx.Err() != nil {
				// The model asked for this call; answer it so the history stays valid on resume.
				a.add(context.WithoutCancel(ctx), s, t, llm.Message{Role: "tool", ToolCallID: tc.ID, Name: tc.Function.Name,
					Content: tools.ErrorResult("interrupted by the user before this tool ran", nil)})
				continue
			}
			a.runTool(ctx, s, t, tc)
		}
		a.steer(ctx, s, t)
	}
	return "", fmt.Errorf("stopped after %d model calls in one turn without a final answer (raise agent.max_turns if this is expected)", a.o.MaxIterations)
}

// interruptedMark ends an answer that stopped before the model finished it
// (Ctrl-C, a stream that broke), as stored and sent back to the model.
const interruptedMark = "[interrupted: this answer was cut off before it was finished]"

// keepPartial stores what the model had streamed before its call failed as the
// assistant's answer, marked interrupted: the user saw it, and without it the
// history would end in two user messages in a row. It goes through
// transform_llm_output like a finished answer, so a redacting plugin sees it
// before it is stored.
func (a *Agent) keepPartial(ctx context.Context, s *Session, t *Turn) {
	text := t.partial
	t.partial = ""
	if strings.TrimSpace(text) == "" {
		return
	}
	ctx = context.WithoutCancel(ctx)
	text = a.transformOutput(ctx, s, text)
	a.add(ctx, s, t, llm.Message{Role: "assistant", Content: strings.TrimRight(text, "\n") + "\n\n" + interruptedMark})
}

// transformOutput runs transform_llm_output over an answer: the first non-empty
// string a plugin returns replaces it.
func (a *Agent) transformOutput(ctx context.Context, s *Session, text string) string {
	if !a.has(hooks.HookTransformLLMOutput) {
		return text
	}
	if r, ok := hooks.FirstString(a.fire(ctx, hooks.HookTransformLLMOutput, map[string]any{
		"response_text": text, "session_id": s.ID, "model": a.o.Model, "platform": a.o.Platform,
	}), true); ok {
		return r
	}
	return text
}

// runTool runs one tool call the model asked for and appends its result.
func (a *Agent) runTool(ctx context.Context, s *Session, t *Turn, tc llm.ToolCall) {
	name := tc.Function.Name
	a.toolStarted(ToolStartEvent{CallID: tc.ID, Name: name, Args: tc.Function.Arguments})
	started := a.o.Now()
	rec := ToolRecord{CallID: tc.ID, Name: name, Args: tc.Function.Arguments}
	var result string
	args, perr := parseArgs(tc.Function.Arguments)
	if perr != nil {
		result = tools.ErrorResult(fmt.Sprintf("Invalid JSON in the arguments of %s: %v. Send the arguments as one JSON object.", name, perr), nil)
		rec.Status, rec.Error = tools.StatusError, perr.Error()
	} else {
		out := a.o.Pipeline.Run(ctx, tools.Call{Name: name, Args: args, TaskID: s.ID, SessionID: s.ID, ToolCallID: tc.ID, TurnID: t.ID})
		result = out.Result
		rec.Status, rec.Error, rec.Duration = out.Status, out.ErrorMessage, out.Duration
	}
	if a.o.Redact != nil {
		result = a.o.Redact(result)
	}
	result = capResult(result, a.o.ToolResultCap)
	rec.Result = result
	t.ToolCalls = append(t.ToolCalls, rec)
	a.toolEnded(ToolEndEvent{CallID: tc.ID, Name: name, Result: result, Err: rec.Error,
		Blocked: rec.Status == tools.StatusBlocked, Duration: a.o.Now().Sub(started)})
	if a.o.Recorder != nil {
		if err := a.o.Recorder.RecordToolCall(context.WithoutCancel(ctx), s.ID, rec); err != nil && a.o.Output != nil {
			a.o.Output.Progress("warning: could not record the tool call: " + err.Error())
		}
	}
	a.add(ctx, s, t, llm.Message{Role: "tool", ToolCallID: tc.ID, Name: name, Content: result})
}

func parseArgs(raw string) (map[string]any, error) {
	if strings.TrimSpace(raw) == "" {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber() // numbers reach the tool as the model wrote them (see jsonx.ExactArgs)
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the JSON object")
	}
	m, ok := jsonx.ExactArgs(v).(map[string]any)
	if !ok {
		return nil, fmt.Errorf("expected a JSON object, got %s", jsonx.KindOf(v))
	}
	return m, nil
}

// capResult keeps a huge tool result from flooding the context window.
func capResult(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n[output truncated: %d of %d bytes shown]", cut, len(s))
}

// toolLister is what the agent needs of the pipeline's registry to tell the
// model which tools there are; the pipeline itself only looks tools up.
type toolLister interface {
	List() []*tools.Tool
}

func (a *Agent) toolSpecs(ctx context.Context) []llm.ToolSpec {
	if a.o.Pipeline == nil {
		return nil
	}
	reg, ok := a.o.Pipeline.Registry.(toolLister)
	if !ok {
		return nil
	}
	var specs []llm.ToolSpec
	for _, t := range reg.List() {
		if !a.o.Pipeline.Allows(t) {
			continue
		}
		if t.Check != nil && !t.Check(ctx) {
			continue
		}
		specs = append(specs, a.spec(t))
	}
	return specs
}

// specKey identifies what a tool tells the model: the tool, its description
// and its parameters' schema (by identity: a tool's schema is not edited in
// place once registered; a re-registered tool is a new *tools.Tool).
type specKey struct {
	tool   *tools.Tool
	desc   string
	params uintptr
}

// spec is t as the model is offered it, encoded once: every request of every
// turn offers the same tools, and encoding their schemas was a tenth of a
// gateway's CPU.
func (a *Agent) spec(t *tools.Tool) llm.ToolSpec {
	params := t.Parameters()
	k := specKey{tool: t, desc: t.ModelDescription(), params: reflect.ValueOf(params).Pointer()}
	if v, ok := a.specs.Load(k); ok {
		return v.(llm.ToolSpec)
	}
	sp := llm.ToolSpec{Name: t.Name, Description: k.desc, Parameters: params}.Encoded()
	if a.specCount.Add(1) > maxCachedSpecs { // tools re-registered many times over: start again
		a.specs.Clear()
		a.specCount.Store(1)
	}
	a.specs.Store(k, sp)
	return sp
}

const maxCachedSpecs = 4096

// add appends m to the session and records it at once.
func (a *Agent) add(ctx context.Context, s *Session, t *Turn, m llm.Message) {
	s.Messages = append(s.Messages, m)
	t.Added = append(t.Added, m)
	a.record(ctx, s, m)
}

func (a *Agent) record(ctx context.Context, s *Session, m llm.Message) {
	if a.o.Recorder == nil {
		return
	}
	if err := a.o.Recorder.AppendMessage(context.WithoutCancel(ctx), s.ID, m); err != nil && a.o.Output != nil {
		a.o.Output.Progress("warning: could not save the message to the session store: " + err.Error())
	}
}

// recordTurnUser records the turn's own user message, through the
// TurnRecorder when the Recorder is one.
func (a *Agent) recordTurnUser(ctx context.Context, s *Session, m llm.Message) {
	tr, ok := a.o.Recorder.(TurnRecorder)
	if !ok {
		a.record(ctx, s, m)
		return
	}
	if err := tr.AppendTurnMessage(context.WithoutCancel(ctx), s.ID, m); err != nil && a.o.Output != nil {
		a.o.Output.Progress("warning: could not save the message to the session store: " + err.Error())
	}
}

func (a *Agent) has(hook hooks.Name) bool { return a.o.Hooks != nil && a.o.Hooks.Has(hook) }

func (a *Agent) fire(ctx context.Context, hook hooks.Name, payload map[string]any) []any {
	if !a.has(hook) {
		return nil
	}
	return a.o.Hooks.Fire(ctx, hook, payload)
}

// spill writes oversized pre_llm_call pieces to files and leaves a preview.
func (a *Agent) spill(sessionID string, r *hooks.LLMContextResult) {
	if a.o.HookOutputDir == "" || len(r.Oversized) == 0 {
		return
	}
	dir := filepath.Join(a.o.HookOutputDir, safeName(sessionID))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return
	}
	for _, i := range r.Oversized {
		piece := r.Pieces[i]
		path := filepath.Join(dir, newID()+".txt")
		if err := os.WriteFile(path, []byte(piece), 0o600); err != nil {
			continue
		}
		head := []rune(piece)
		preview := string(head[:min(len(head), 1500)])
		r.Pieces[i] = fmt.Sprintf("%s\n[... %d characters in total; the full text is in %s]", preview, len(head), path)
	}
}

func safeName(s string) string {
	if s == "" {
		return "session"
	}
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == 0 {
			return '_'
		}
		return r
	}, s)
}

func messagesAsMaps(ms []llm.Message) []any {
	out := make([]any, 0, len(ms))
	for _, m := range ms {
		row := map[string]any{"role": m.Role, "content": m.Content}
		if m.Name != "" {
			row["name"] = m.Name
		}
		if m.ToolCallID != "" {
			row["tool_call_id"] = m.ToolCallID
		}
		if len(m.ToolCalls) > 0 {
			calls := make([]any, 0, len(m.ToolCalls))
			for _, c := range m.ToolCalls {
				calls = append(calls, map[string]any{"id": c.ID, "type": "function",
					"function": map[string]any{"name": c.Function.Name, "arguments": c.Function.Arguments}})
			}
			row["tool_calls"] = calls
		}
		out = append(out, row)
	}
	return out
}

func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
