package plugins

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hermes-go/hermes/internal/tools"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// This file holds what plugins reach only when an agent (or a command standing
// in for one) is present: middleware chains (§11.4), system prompt sections
// (§11.2), ctx.inject_message (§10.4) and ctx.llm.

// ---- services the agent provides ---------------------------------------------------

// Injector receives ctx.inject_message text in CLI mode. It reports whether the
// message was accepted.
type Injector func(content, role string) bool

// PluginLLM serves ctx.llm.complete / complete_structured for one plugin.
// method is "complete" or "complete_structured"; kwargs are the plugin's arguments.
type PluginLLM func(ctx context.Context, pluginID, method string, kwargs map[string]any) (map[string]any, error)

type services struct {
	inject atomic.Pointer[Injector]
	llm    atomic.Pointer[PluginLLM]
}

// SetInjector installs (or, with nil, removes) the CLI injector.
func (m *Manager) SetInjector(f Injector) {
	if f == nil {
		m.svc.inject.Store(nil)
		return
	}
	m.svc.inject.Store(&f)
}

// SetLLM installs the ctx.llm implementation.
func (m *Manager) SetLLM(f PluginLLM) {
	if f == nil {
		m.svc.llm.Store(nil)
		return
	}
	m.svc.llm.Store(&f)
}

// agentFacade serves the facades that need an agent; ok=false when name is not one.
func (m *Manager) agentFacade(ctx context.Context, p *Plugin, fp protocol.FacadeParams) (any, bool, error) {
	switch fp.Name {
	case "inject_message":
		content := ""
		if len(fp.Args) > 0 {
			content, _ = fp.Args[0].(string)
		}
		role, _ := fp.Kwargs["role"].(string)
		if role == "" {
			role = "user"
		}
		inj := m.svc.inject.Load()
		if inj == nil {
			m.log.Warn("inject_message: no CLI reference (not available in gateway mode)", "plugin", p.Key)
			return false, true, nil
		}
		text := content
		if role != "user" {
			text = fmt.Sprintf("[%s] %s", role, content)
		}
		return (*inj)(text, role), true, nil
	case "llm.complete", "llm.complete_structured":
		f := m.svc.llm.Load()
		if f == nil {
			return nil, true, protocol.Errorf(protocol.CodeNotAvailable, "ctx.llm is not available here: no model is configured for this command")
		}
		res, err := (*f)(ctx, p.Key, strings.TrimPrefix(fp.Name, "llm."), fp.Kwargs)
		return res, true, err
	}
	return nil, false, nil
}

// ---- middleware ------------------------------------------------------------------------

// middlewareReg is one register_middleware callback.
type middlewareReg struct {
	kind   string
	plugin string
	// invoke calls the callback with kwargs; next, when non-nil, is what the
	// callback's next_call runs (execution kinds only).
	invoke func(ctx context.Context, kwargs map[string]any, next func(ctx context.Context, payload any) (any, error)) (any, error)
}

var middlewareKinds = map[string]bool{"tool_request": true, "tool_execution": true, "llm_request": true, "llm_execution": true}

const middlewareSchemaVersion = "hermes.middleware.v1"

func (m *Manager) registerMiddleware(p *Plugin, kind, handle string) {
	if !middlewareKinds[kind] {
		m.warnFor(p, "plugin %s registered unknown middleware kind '%s' (valid: llm_execution, llm_request, tool_execution, tool_request)", p.Key, kind)
	}
	reg := &middlewareReg{kind: kind, plugin: p.Key, invoke: m.remoteMiddleware(p, handle)}
	m.addPending(p, func(r *registrations) {
		r.middleware = append(r.middleware, kind)
		r.mws = append(r.mws, reg)
	})
}

func (m *Manager) remoteMiddleware(p *Plugin, handle string) func(context.Context, map[string]any, func(context.Context, any) (any, error)) (any, error) {
	return func(ctx context.Context, kwargs map[string]any, next func(context.Context, any) (any, error)) (any, error) {
		params := map[string]any{"handle": handle, "kwargs": kwargs}
		if next != nil {
			token := m.nexts.add(next)
			defer m.nexts.drop(token)
			params["next_token"] = token
		}
		raw, err := p.call(ctx, protocol.MethodMiddlewareCall, params)
		if err != nil {
			return nil, asPluginError(err)
		}
		var v any
		if len(raw) > 0 {
			if err := json.Unmarshal(raw, &v); err != nil {
				return nil, err
			}
		}
		return v, nil
	}
}

// nextTable maps the single-use next_call tokens handed to execution middleware.
type nextTable struct {
	mu  sync.Mutex
	seq uint64
	fns map[string]func(context.Context, any) (any, error)
}

func (t *nextTable) add(f func(context.Context, any) (any, error)) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.fns == nil {
		t.fns = map[string]func(context.Context, any) (any, error){}
	}
	t.seq++
	tok := fmt.Sprintf("next-%d", t.seq)
	t.fns[tok] = f
	return tok
}

func (t *nextTable) take(tok string) func(context.Context, any) (any, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f := t.fns[tok]
	delete(t.fns, tok)
	return f
}

func (t *nextTable) drop(tok string) { t.take(tok) }

// middlewareNext serves ctx.middleware_next: a plugin's next_call.
func (m *Manager) middlewareNext(ctx context.Context, token string, payload any) (any, error) {
	f := m.nexts.take(token)
	if f == nil {
		return nil, protocol.Errorf(protocol.CodeRuntimeError, "next_call may be called only once, and only while the middleware runs")
	}
	v, err := f(ctx, payload)
	if err != nil {
		return nil, protocol.Errorf(protocol.CodeRuntimeError, "%v", err)
	}
	return v, nil
}

// middlewares returns the committed callbacks of kind in load order.
func (m *Manager) middlewares(kind string) []*middlewareReg {
	if m.mwCount.Load() == 0 {
		return nil
	}
	var out []*middlewareReg
	for _, p := range m.loadedPlugins() {
		p.mu.Lock()
		for _, r := range p.regs.mws {
			if r.kind == kind {
				out = append(out, r)
			}
		}
		p.mu.Unlock()
	}
	return out
}

func (m *Manager) loadedPlugins() []*Plugin {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*Plugin, 0, len(m.sorted))
	for _, p := range m.sorted {
		if p.Loaded {
			out = append(out, p)
		}
	}
	return out
}

// HasMiddleware reports whether any loaded plugin registered middleware of kind.
func (m *Manager) HasMiddleware(kind string) bool { return len(m.middlewares(kind)) > 0 }

// RequestMiddleware runs the tool_request or llm_request chain. field is "args"
// or "request": each callback may return {field: {...}} to replace it for the
// callbacks after it. The trace lists who changed what.
func (m *Manager) RequestMiddleware(ctx context.Context, kind, field string, value map[string]any, meta map[string]any) (map[string]any, []any) {
	chain := m.middlewares(kind)
	if len(chain) == 0 {
		return value, nil
	}
	original := deepCopy(value)
	var trace []any
	for _, mw := range chain {
		kw := maps.Clone(meta)
		kw[field] = deepCopy(value)
		kw["original_"+field] = deepCopy(original)
		kw["telemetry_schema_version"] = "hermes.observer.v1"
		kw["middleware_schema_version"] = middlewareSchemaVersion
		res, err := mw.invoke(ctx, kw, nil)
		if err != nil {
			m.log.Warn("middleware failed; skipped", "kind", kind, "plugin", mw.plugin, "error", err)
			continue
		}
		out, ok := res.(map[string]any)
		if !ok {
			continue
		}
		repl, ok := out[field].(map[string]any)
		if !ok {
			continue
		}
		value = repl
		entry := map[string]any{"source": "plugin", "plugin": mw.plugin}
		for _, k := range []string{"source", "reason", "name"} {
			if s, ok := out[k].(string); ok && s != "" {
				entry[k] = s
			}
		}
		trace = append(trace, entry)
	}
	return value, trace
}

// ExecutionMiddleware runs the tool_execution or llm_execution chain around
// final. field names what next_call takes ("args" or "request"). A callback that
// fails before calling next_call is skipped; once next_call has run, its result
// stands and downstream errors propagate unchanged.
func (m *Manager) ExecutionMiddleware(ctx context.Context, kind, field string, value map[string]any, meta map[string]any,
	final func(ctx context.Context, value map[string]any) (any, error)) (any, error) {
	chain := m.middlewares(kind)
	var run func(ctx context.Context, i int, value map[string]any) (any, error)
	run = func(ctx context.Context, i int, value map[string]any) (any, error) {
		if i == len(chain) {
			return final(ctx, value)
		}
		mw := chain[i]
		var called atomic.Bool
		var downstreamErr error
		next := func(ctx context.Context, payload any) (any, error) {
			called.Store(true)
			v := value
			if pm, ok := payload.(map[string]any); ok {
				v = pm
			}
			res, err := run(ctx, i+1, v)
			if err != nil {
				downstreamErr = err
				return nil, err
			}
			return jsonable(res), nil
		}
		kw := maps.Clone(meta)
		kw[field] = deepCopy(value)
		kw["telemetry_schema_version"] = "hermes.observer.v1"
		kw["middleware_schema_version"] = middlewareSchemaVersion
		res, err := mw.invoke(ctx, kw, next)
		if err != nil {
			if downstreamErr != nil {
				return nil, downstreamErr
			}
			if !called.Load() {
				m.log.Warn("middleware failed before next_call; skipped", "kind", kind, "plugin", mw.plugin, "error", err)
				return run(ctx, i+1, value)
			}
			return nil, err
		}
		return res, nil
	}
	return run(ctx, 0, value)
}

// jsonable turns a Go result into the plain JSON value a plugin's next_call returns.
func jsonable(v any) any {
	switch v.(type) {
	case nil, string, bool, float64, map[string]any, []any:
		return v
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

func deepCopy(v map[string]any) map[string]any {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return maps.Clone(v)
	}
	var out map[string]any
	if json.Unmarshal(b, &out) != nil {
		return maps.Clone(v)
	}
	return out
}

// ---- system prompt sections ------------------------------------------------------------

type promptSection struct {
	id       string
	plugin   string
	content  string
	render   func(ctx context.Context, info map[string]any) (string, error)
	maxChars int
}

const (
	maxPromptSections      = 32
	maxPromptSectionsChars = 8000
	promptSectionsStart    = "<!-- hermes-plugin-sections:start -->"
	promptSectionsEnd      = "<!-- hermes-plugin-sections:end -->"
)

// validPromptSectionID is ^[a-z0-9][a-z0-9._-]{0,127}$ without a regexp: Go
// compiles a counted repeat into that many copies, ~2 ms at every start-up.
func validPromptSectionID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case i > 0 && (c == '.' || c == '_' || c == '-'):
		default:
			return false
		}
	}
	return true
}

func (m *Manager) registerPromptSection(p *Plugin, rp protocol.RegisterOtherParams) (any, error) {
	id, _ := rp.Details["id"].(string)
	if !validPromptSectionID(id) {
		return nil, protocol.Errorf(protocol.CodeInvalidArgument, "system prompt section id must be 1-128 lowercase characters using letters, numbers, '.', '_', or '-'")
	}
	maxChars := 4000
	if f, ok := rp.Details["max_chars"].(float64); ok {
		maxChars = int(f)
	}
	if owner := m.promptSectionOwner(id); owner != "" {
		return nil, protocol.Errorf(protocol.CodeInvalidArgument, "system prompt section %q is already registered by plugin %s", id, owner)
	}
	sec := &promptSection{id: id, plugin: p.Key, maxChars: maxChars}
	if s, ok := rp.Details["content"].(string); ok {
		sec.content = s
	}
	if rp.Handle != "" {
		handle := rp.Handle
		sec.render = func(ctx context.Context, info map[string]any) (string, error) {
			raw, err := p.call(ctx, protocol.MethodPromptSection, map[string]any{"handle": handle, "info": info})
			if err != nil {
				return "", asPluginError(err)
			}
			var v any
			if err := json.Unmarshal(raw, &v); err != nil {
				return "", err
			}
			s, ok := v.(string)
			if !ok {
				return "", fmt.Errorf("returned %T, not a string", v)
			}
			return s, nil
		}
	}
	m.addPending(p, func(r *registrations) {
		r.sections = append(r.sections, sec)
		r.other = append(r.other, OtherInfo{Registrar: rp.Registrar, Name: id, Note: "system prompt section"})
	})
	return protocol.RegisterResult{Registered: true}, nil
}

func (m *Manager) promptSectionOwner(id string) string {
	m.mu.Lock()
	all := slices.Clone(m.sorted)
	m.mu.Unlock()
	for _, p := range all {
		p.mu.Lock()
		for _, list := range [][]*promptSection{p.regs.sections, p.pending.sections} {
			for _, s := range list {
				if s.id == id {
					p.mu.Unlock()
					return p.Key
				}
			}
		}
		p.mu.Unlock()
	}
	return ""
}

// RenderSystemPromptSections renders every plugin section for a new session,
// sorted by id, in upstream's marked block; a section that fails, is empty, too
// long or carries the reserved markers is skipped with a warning.
func (m *Manager) RenderSystemPromptSections(ctx context.Context, info map[string]any) string {
	var secs []*promptSection
	for _, p := range m.loadedPlugins() {
		p.mu.Lock()
		secs = append(secs, p.regs.sections...)
		p.mu.Unlock()
	}
	if len(secs) == 0 {
		return ""
	}
	slices.SortFunc(secs, func(a, b *promptSection) int { return strings.Compare(a.id, b.id) })
	var b strings.Builder
	total, n := 0, 0
	for _, s := range secs {
		if n == maxPromptSections {
			m.log.Warn("more than 32 system prompt sections; the rest are skipped", "section", s.id)
			break
		}
		text := s.content
		if s.render != nil {
			var err error
			text, err = s.render(ctx, maps.Clone(info))
			if err != nil {
				m.log.Warn("system prompt section skipped: its content function failed", "section", s.id, "plugin", s.plugin, "error", err)
				continue
			}
		}
		chars := len([]rune(text))
		switch {
		case strings.TrimSpace(text) == "":
			m.log.Warn("system prompt section skipped: empty", "section", s.id, "plugin", s.plugin)
			continue
		case strings.Contains(text, "<!-- hermes-plugin-section"):
			m.log.Warn("system prompt section skipped: contains reserved markers", "section", s.id, "plugin", s.plugin)
			continue
		case chars > s.maxChars:
			m.log.Warn("system prompt section skipped: longer than its max_chars", "section", s.id, "plugin", s.plugin, "chars", chars, "max_chars", s.maxChars)
			continue
		case total+chars > maxPromptSectionsChars:
			m.log.Warn("system prompt section skipped: sections would exceed 8000 characters in total", "section", s.id, "plugin", s.plugin)
			continue
		}
		total += chars
		n++
		fmt.Fprintf(&b, "## Plugin Context: %s\n<!-- hermes-plugin-section-chars:%d -->\n\n%s\n\n", s.id, chars, text)
	}
	if n == 0 {
		return ""
	}
	return promptSectionsStart + "\n" + strings.TrimRight(b.String(), "\n") + "\n" + promptSectionsEnd
}

// ---- the tool pipeline's middleware ------------------------------------------------------

// toolMiddleware adapts the manager's chains to tools.Middleware.
type toolMiddleware struct{ m *Manager }

func toolMeta(c tools.Call) map[string]any {
	return map[string]any{"tool_name": c.Name, "task_id": c.TaskID, "session_id": c.SessionID,
		"tool_call_id": c.ToolCallID, "turn_id": c.TurnID, "api_request_id": ""}
}

func (t toolMiddleware) ToolRequest(ctx context.Context, c tools.Call, args map[string]any) (map[string]any, []any) {
	return t.m.RequestMiddleware(ctx, "tool_request", "args", args, toolMeta(c))
}

func (t toolMiddleware) ToolExecution(ctx context.Context, c tools.Call, args map[string]any,
	run func(context.Context, map[string]any) (string, error)) (string, error) {
	if !t.m.HasMiddleware("tool_execution") {
		return run(ctx, args)
	}
	res, err := t.m.ExecutionMiddleware(ctx, "tool_execution", "args", args, toolMeta(c),
		func(ctx context.Context, v map[string]any) (any, error) { return run(ctx, v) })
	if err != nil {
		return "", err
	}
	switch v := res.(type) {
	case string:
		return v, nil
	case nil:
		return "", nil
	}
	b, err := json.Marshal(res)
	if err != nil {
		return "", fmt.Errorf("tool_execution middleware returned a value that is not JSON: %w", err)
	}
	return string(b), nil
}

// LLMMiddleware is the llm_request / llm_execution chains as the agent calls them.
func (m *Manager) LLMMiddleware() LLMChains { return LLMChains{m} }

// LLMChains adapts the manager's chains to the agent.
type LLMChains struct{ m *Manager }

// Request runs llm_request: each callback may return {"request": {...}}.
func (c LLMChains) Request(ctx context.Context, req, meta map[string]any) map[string]any {
	if !c.m.HasMiddleware("llm_request") {
		return nil
	}
	out, _ := c.m.RequestMiddleware(ctx, "llm_request", "request", req, meta)
	return out
}

// Execute runs llm_execution around next.
func (c LLMChains) Execute(ctx context.Context, req, meta map[string]any, next func(map[string]any) (any, error)) (any, error) {
	if !c.m.HasMiddleware("llm_execution") {
		return next(req)
	}
	return c.m.ExecutionMiddleware(ctx, "llm_execution", "request", req, meta,
		func(ctx context.Context, v map[string]any) (any, error) { return next(v) })
}
