package app

import (
	"context"
	"maps"
	"path/filepath"
	"strings"

	"github.com/hermes-go/hermes/internal/agent"
	"github.com/hermes-go/hermes/internal/approval"
	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/hooks"
	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/internal/plugins"
	"github.com/hermes-go/hermes/internal/plugins/registry"
	"github.com/hermes-go/hermes/internal/tools"
)

// ChatOptions are what `hermes chat` asks of its session: the flags that shape
// the agent, where its output goes and who takes injected messages.
type ChatOptions struct {
	// Model replaces model.default for this chat ("" keeps it).
	Model string
	// Provider replaces model.provider (built-in or a plugin's
	// register_provider); its endpoint and key then come from the provider.
	Provider string
	// Toolsets is --toolsets as typed: comma-separated names, "all", or ""
	// for config.yaml's `toolsets:` (else every tool).
	Toolsets string
	// NoStream asks the model for whole answers.
	NoStream bool
	// Resume is the id (or a unique prefix) of the stored session to continue;
	// "" starts a new one.
	Resume string
	// Output shows the streamed answer and the progress lines of a turn.
	Output ChatOutput
	// Inject is ctx.inject_message while the chat runs: it reports whether the
	// message was taken.
	Inject func(text, role string) bool
	// Prompter, when set, answers the approval requests of this chat instead of
	// the line prompt on the terminal (the full-screen chat shows a modal).
	Prompter approval.Prompter
}

// ChatOutput receives what the user sees while a turn runs: pieces of the
// streamed answer (Text) and status lines (Progress).
type ChatOutput interface {
	Text(s string)
	Progress(s string)
}

// Turn is what one turn produced: the answer (Final), whether it was streamed,
// and the messages and tool calls it added.
type Turn = agent.Turn

// ErrInterrupted is what Chat.Run returns for a turn whose context was cancelled.
var ErrInterrupted = agent.ErrInterrupted

// Chat is one `hermes chat` session on a loaded Host: the agent over the
// host's tool pipeline, hooks, prompt sections and LLM chains, the model
// client, and the session recorded in state.db.
type Chat struct {
	h       *Host
	hooks   *hooks.Dispatcher
	ag      *agent.Agent
	store   chatStore
	sess    *agent.Session
	model   string
	endChat func()
	// contextLen is model.context_length (0: unknown), the base of the @ reference caps.
	contextLen int
	// What /model needs to build another client: the model section and .env.
	modelSection map[string]any
	dotenv       map[string]string
	provider     string
	// pricing is model.pricing: USD per million tokens, by model name.
	pricing map[string]ModelPrice
	// promptLoaded: the context files were read into the agent's system
	// prompt (a resumed session reads them only when /new starts another).
	promptLoaded bool
	// lastInput is the last message as the user typed it (before @ expansion), for /retry.
	lastInput, lastSent string
}

const defaultSystemPrompt = `You are Hermes, an AI agent working on the user's machine through tools.
Use the tools when they help; say plainly what you did and what you found.`

// NewChat builds the chat session: the model from config.yaml (with .env and
// o.Model), the agent, and a new session or the one o.Resume names. Close it
// when done.
func (h *Host) NewChat(ctx context.Context, o ChatOptions) (*Chat, error) {
	doc, err := h.Store().Load()
	if err != nil {
		return nil, err
	}
	cfg := doc.Map()
	modelSection := llm.ModelSection(cfg["model"])
	if o.Model != "" || o.Provider != "" {
		modelSection = maps.Clone(modelSection)
		if modelSection == nil {
			modelSection = map[string]any{}
		}
	}
	if o.Model != "" {
		modelSection["default"] = o.Model
	}
	if p := strings.ToLower(strings.TrimSpace(o.Provider)); p != "" && p != modelSection["provider"] {
		delete(modelSection, "base_url")
		delete(modelSection, "api_key")
		modelSection["provider"] = p
	}
	dotenv, err := config.ReadDotenv(h.home.EnvPath())
	if err != nil {
		return nil, err
	}
	lcfg, err := h.llmConfig(ctx, modelSection, dotenv)
	if err != nil {
		return nil, Failf("Error: %v", err)
	}
	// After the plugins loaded: shell hooks fire after their callbacks.
	if err := h.registerShellHooks(ctx, doc); err != nil {
		return nil, err
	}

	h.mcp.watch = true
	if err := h.registerMCPTools(ctx, parseToolsets(o.Toolsets, cfg["toolsets"])); err != nil {
		return nil, err
	}
	restoreTools, err := h.chooseToolsets(o.Toolsets, cfg["toolsets"])
	if err != nil {
		return nil, err
	}
	pricing, err := parsePricing(cfg)
	if err != nil {
		return nil, err
	}
	c := &Chat{h: h, hooks: h.Registry.Hooks(), model: lcfg.Model, contextLen: intSetting(cfg, []string{"model", "context_length"}, 0),
		modelSection: modelSection, dotenv: dotenv, provider: lcfg.Provider, pricing: pricing}
	out := chatOutput(o.Output, h.f)
	if o.Prompter != nil && h.Approver != nil {
		h.Approver.Prompter = o.Prompter
	}
	var mem agent.Memory
	if h.attachMemory(ctx) {
		mem = h.memory
	}
	memToolsOn := h.memoryToolsOn()
	sections := func(ctx context.Context, info map[string]any) string {
		parts := []string{}
		if b := h.memory.SystemPrompt(ctx, memToolsOn); b != "" {
			parts = append(parts, b)
		}
		if s := h.Registry.RenderSystemPromptSections(ctx, info); s != "" {
			parts = append(parts, s)
		}
		return strings.Join(parts, "\n\n")
	}
	ag := agent.New(agent.Options{
		Model: lcfg.Model, Provider: lcfg.Provider, BaseURL: lcfg.BaseURL,
		Pipeline: h.Pipeline(), Hooks: c.hooks, Platform: "cli",
		Output: out, Stream: !o.NoStream,
		SystemSections: sections,
		Memory:         mem,
		PreCompress:    preCompressor(mem, h),
		HookOutputDir:  filepath.Join(h.home.Dir, "hook_outputs"),
		MaxIterations:  intSetting(cfg, []string{"agent", "max_turns"}, 90),
		Middleware:     h.Registry.LLMChains(),
		Redact:         h.f.Redactor().String,
	})
	ag.ObserveAttempts(&lcfg)
	client, err := llm.New(lcfg)
	if err != nil {
		restoreTools()
		return nil, Failf("Error: %v", err)
	}
	ag.SetClient(client)
	cs := readCompression(cfg, h.f.Warn)
	ag.SetEngine(h.contextEngine(ctx, cs, client, lcfg, out), cs.enabled)
	c.ag = ag

	endAgent := h.Chat(client, lcfg, o.Inject)
	c.endChat = func() { endAgent(); restoreTools() }
	if err := c.open(ctx, o.Resume); err != nil {
		c.endChat()
		return nil, err
	}
	return c, nil
}

// chatOutput is out, with a spinner while the model is waited on when stderr
// is a terminal; elsewhere each retry is a line of its own.
func chatOutput(out ChatOutput, f *Factory) agent.Output {
	if out == nil {
		return nil
	}
	red := redactedOutput{out, f.Redactor().String}
	if showsEvents(out) {
		// It draws tool calls, reasoning and the wait itself (the terminal
		// chat): a spinner written to stderr would scribble over its screen.
		return redactedEvents{red}
	}
	out = red
	if f.IO.ErrTTY {
		return &spinnerOutput{ChatOutput: out, err: f.IO.Err, now: f.Now, delay: spinnerDelay}
	}
	return out
}

// redactedOutput masks secrets in what a turn shows. A streamed answer is
// masked piece by piece: a secret split across two pieces is not caught here
// (the final answer printed whole is; see Chat.Redact).
type redactedOutput struct {
	ChatOutput
	redact func(string) string
}

func (o redactedOutput) Text(s string)     { o.ChatOutput.Text(o.redact(s)) }
func (o redactedOutput) Progress(s string) { o.ChatOutput.Progress(o.redact(s)) }

// Redact masks secrets in text the chat shows (the final answer, errors).
func (c *Chat) Redact(s string) string { return c.h.f.Redactor().String(s) }

// open opens state.db and starts the session: the one resume names, else a
// new one whose system prompt is recorded as its first message.
func (c *Chat) open(ctx context.Context, resume string) error {
	store, err := openChatStore(ctx, c.h.home.Dir)
	if err != nil {
		return err
	}
	if resume != "" {
		id, history, err := store.History(ctx, resume)
		if err != nil {
			_ = store.Close()
			return Failf("Error: %v (list sessions with: hermes sessions list)", err)
		}
		c.ag.SetRecorder(store)
		c.sess = c.ag.ResumeSession(ctx, id, history)
	} else {
		id, err := store.Create(ctx, c.model, "cli")
		if err != nil {
			_ = store.Close()
			return err
		}
		c.ag.SetRecorder(store)
		c.loadSystemPrompt()
		c.sess = c.ag.NewSession(ctx, id)
	}
	c.store = store
	c.setSessionKey()
	return nil
}

// loadSystemPrompt reads SOUL.md and the project context file into the
// system prompt of the sessions started from now on, once per chat.
func (c *Chat) loadSystemPrompt() {
	if !c.promptLoaded {
		c.ag.SetSystemPrompt(systemPrompt(c.h.home.Dir, c.h.f.Cwd, c.h.f.Warn))
		c.promptLoaded = true
	}
}

// setSessionKey makes "allow for this session" answers of the approval prompt
// last as long as the current session.
func (c *Chat) setSessionKey() {
	if c.h.Approver != nil {
		c.h.Approver.SessionKey = c.sess.ID
	}
}

// Model is the model the chat talks to.
func (c *Chat) Model() string { return c.model }

// SessionID is the id of the current session.
func (c *Chat) SessionID() string { return c.sess.ID }

// Streams reports whether answers reach the Output as a stream.
func (c *Chat) Streams() bool { return c.ag.Streams() }

// Run runs one turn of the current session; cancelling ctx interrupts it
// (ErrInterrupted), keeping what was said so far.
func (c *Chat) Run(ctx context.Context, input string) (*Turn, error) {
	sent := c.expandReferences(ctx, input)
	c.lastInput, c.lastSent = input, sent
	t, err := c.ag.Run(ctx, c.sess, sent)
	if t != nil {
		c.recordUsage(ctx, t)
	}
	return t, err
}

// Compaction is what one /compress did.
type Compaction = agent.Compaction

// Compress compacts the conversation now (/compress [focus]); the session
// continues in a child of the current one.
func (c *Chat) Compress(ctx context.Context, focus string) (Compaction, error) {
	res, err := c.ag.Compress(ctx, c.sess, focus)
	c.setSessionKey()
	return res, err
}

// NewSession ends the current session and starts another: finalize the old
// one, reset to the new one; on_session_start fires with its first turn. It
// returns the new session's id.
func (c *Chat) NewSession(ctx context.Context) (string, error) {
	old := c.sess.ID
	id, err := c.store.Create(ctx, c.model, "cli")
	if err != nil {
		return "", err
	}
	_ = c.store.End(ctx, old)
	c.h.memory.SessionEnd(ctx, old, messagesForMemory(c.sess.Messages))
	c.h.memory.SessionSwitch(ctx, id, old, true)
	if c.hooks.Has(hooks.HookOnSessionFinalize) {
		c.hooks.Fire(ctx, hooks.HookOnSessionFinalize, map[string]any{"session_id": old, "platform": "cli",
			"reason": "new_session", "old_session_id": old, "new_session_id": id})
	}
	if c.hooks.Has(hooks.HookOnSessionReset) {
		c.hooks.Fire(ctx, hooks.HookOnSessionReset, map[string]any{"session_id": id, "platform": "cli", "reason": "new_session"})
	}
	c.loadSystemPrompt()
	c.sess = c.ag.NewSession(ctx, id)
	c.setSessionKey()
	return id, nil
}

// PreCommand fires pre_command for a slash command about to run: typed is
// the name as the user wrote it, canonical the command it stands for.
func (c *Chat) PreCommand(ctx context.Context, typed, canonical, rawArgs string) {
	if !c.hooks.Has(hooks.HookPreCommand) {
		return
	}
	alias := any(nil)
	if typed != canonical {
		alias = typed
	}
	c.hooks.Fire(ctx, hooks.HookPreCommand, map[string]any{
		"surface": "cli", "command": canonical, "alias_used": alias, "args_raw": strings.TrimSpace(rawArgs),
		"session_key": c.sess.ID, "platform": "cli",
	})
}

// Commands are the slash commands the plugins registered, sorted by name.
func (c *Chat) Commands() []*registry.Command { return c.h.Registry.Commands() }

// Command finds the plugin slash command called name.
func (c *Chat) Command(name string) (*registry.Command, bool) {
	for _, cmd := range c.h.Registry.Commands() {
		if cmd.Name == name {
			return cmd, true
		}
	}
	return nil, false
}

// Tools are the tools of this chat: those registered in its enabled toolsets.
func (c *Chat) Tools() []*tools.Tool {
	var out []*tools.Tool
	for _, t := range c.h.Registry.Tools().List() {
		if c.h.tools.allows(t) {
			out = append(out, t)
		}
	}
	return out
}

// Plugins are the discovered plugins, sorted by key.
func (c *Chat) Plugins() []*plugins.Plugin { return c.h.Plugins() }

// Close ends the chat: plugins can no longer inject, on_session_finalize
// fires, the session is marked ended and state.db closed.
func (c *Chat) Close() {
	c.endChat()
	c.h.memory.SessionEnd(context.Background(), c.sess.ID, messagesForMemory(c.sess.Messages))
	c.h.memory.Close(context.Background())
	if c.hooks.Has(hooks.HookOnSessionFinalize) {
		c.hooks.Fire(context.Background(), hooks.HookOnSessionFinalize, map[string]any{"session_id": c.sess.ID, "platform": "cli", "reason": "exit"})
	}
	_ = c.store.End(context.Background(), c.sess.ID)
	_ = c.store.Close()
}

// memoryPreCompress hands a compaction's messages to the memory provider
// (on_pre_compress), whose text the summary then keeps.
type memoryPreCompress struct{ h *Host }

func (m memoryPreCompress) PreCompress(ctx context.Context, messages []llm.Message) string {
	return m.h.memory.PreCompress(ctx, messagesForMemory(messages))
}

// preCompressor is the compaction's memory side when a provider is attached.
func preCompressor(mem agent.Memory, h *Host) agent.PreCompressor {
	if mem == nil {
		return nil
	}
	return memoryPreCompress{h}
}

// messagesForMemory is a session's history as on_session_end receives it.
func messagesForMemory(ms []llm.Message) []map[string]any {
	out := make([]map[string]any, 0, len(ms))
	for _, m := range ms {
		if m.Role == "system" {
			continue
		}
		out = append(out, map[string]any{"role": m.Role, "content": m.Content})
	}
	return out
}

// intSetting reads the number at path in config.yaml, def when it is missing
// or not a number.
func intSetting(cfg map[string]any, path []string, def int) int {
	v, _ := valueAt(cfg, path...)
	if n, ok := toInt(v); ok {
		return n
	}
	return def
}
