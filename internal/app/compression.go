package app

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hermes-go/hermes/internal/agent"
	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/internal/plugins/discovery"
	"github.com/hermes-go/hermes/internal/plugins/hostapi"
	"github.com/hermes-go/hermes/internal/plugins/registry"
	"github.com/hermes-go/hermes/internal/termsafe"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// Bounds on a plugin engine's calls: compress may itself call a model.
const (
	engineCallTimeout     = 10 * time.Second
	engineCompressTimeout = 180 * time.Second
)

// compressionSettings are config.yaml's context, compression and
// auxiliary.compression blocks as the chat reads them.
type compressionSettings struct {
	engine        string // context.engine
	enabled       bool   // compression.enabled
	threshold     float64
	targetRatio   float64
	protectLastN  int
	contextLength int // model.context_length (0: not set)
	aux           map[string]any
}

func readCompression(cfg map[string]any, warn func(string)) compressionSettings {
	s := compressionSettings{engine: hostapi.BuiltinContextEngine, enabled: true}
	block := func(path ...string) map[string]any {
		var v any = cfg
		for _, p := range path {
			m, _ := v.(map[string]any)
			v = m[p]
		}
		m, _ := v.(map[string]any)
		return m
	}
	if v, ok := block("context")["engine"]; ok && v != nil {
		name, isStr := v.(string)
		switch {
		case !isStr:
			warn(fmt.Sprintf("context.engine in config.yaml must be an engine's name, not %T; the built-in compressor is used", v))
		case strings.TrimSpace(name) != "":
			s.engine = strings.TrimSpace(name)
		}
	}
	comp := block("compression")
	if v, ok := comp["enabled"].(bool); ok {
		s.enabled = v
	}
	if v, ok := comp["threshold"]; ok {
		f, isNum := toFloat(v)
		if !isNum || f <= 0 || f > 1 {
			warn(fmt.Sprintf("compression.threshold in config.yaml must be a fraction of the context window between 0 and 1 (e.g. 0.5), not %v; 0.5 is used", v))
		} else {
			s.threshold = f
		}
	}
	if f, ok := toFloat(comp["target_ratio"]); ok && f > 0 && f < 1 {
		s.targetRatio = f
	}
	if n, ok := toInt(comp["protect_last_n"]); ok && n > 0 {
		s.protectLastN = n
	}
	if n, ok := toInt(block("model")["context_length"]); ok && n > 0 {
		s.contextLength = n
	}
	s.aux = block("auxiliary", "compression")
	return s
}

func toFloat(v any) (float64, bool) {
	if f, ok := v.(float64); ok {
		return f, true
	}
	n, ok := toInt(v)
	return float64(n), ok
}

// contextEngine builds the chat's engine: the plugin engine context.engine
// names, else the built-in compressor summarising with auxiliary.compression
// (default: the chat's own model and endpoint).
func (h *Host) contextEngine(ctx context.Context, s compressionSettings, main llm.Client, lcfg llm.Config, out agent.Output) agent.ContextEngine {
	ctxLen := s.contextLength
	if ctxLen == 0 {
		ctxLen = agent.DefaultContextLength
	}
	if s.engine != hostapi.BuiltinContextEngine {
		// A plugins/context_engine/<name>/ plugin is selected by its directory
		// name, whatever its engine calls itself; a general plugin's engine by
		// the engine's name.
		dirKey := discovery.CategoryContextEngine + "/" + s.engine
		for _, p := range h.Registry.Providers(registry.ContextEngine) {
			if (p.Name == s.engine || p.Plugin == dirKey) && p.Conn != nil {
				eng := &pluginEngine{p: p, out: out}
				eng.UpdateModel(ctx, lcfg.Model, ctxLen)
				return eng
			}
		}
		h.f.Warn(fmt.Sprintf("context.engine is '%s' but no enabled plugin registered a context engine of that name; the built-in compressor is used (hermes plugins list shows what is installed)",
			termsafe.Line(s.engine)))
	}
	cc := agent.CompressorConfig{Client: main, Model: lcfg.Model, ContextLength: ctxLen, Threshold: s.threshold,
		TargetRatio: s.targetRatio, ProtectLastN: s.protectLastN, Timeout: 60 * time.Second, Now: h.f.Now}
	str := func(k string) string { v, _ := s.aux[k].(string); return strings.TrimSpace(v) }
	if m := str("model"); m != "" {
		cc.Model = m
	}
	if f, ok := toFloat(s.aux["timeout"]); ok && f > 0 {
		cc.Timeout = time.Duration(f * float64(time.Second))
	}
	if base := str("base_url"); base != "" {
		c := lcfg
		c.BaseURL, c.APIKey, c.OnAttempt, c.OnRetry, c.OnAttemptError = base, str("api_key"), nil, nil, nil
		c.Headers, c.Profile = nil, nil // the main provider's, not this endpoint's
		client, err := llm.New(c)
		if err != nil {
			h.f.Warn(fmt.Sprintf("auxiliary.compression.base_url: %v; summaries use the chat's own endpoint", err))
		} else {
			cc.Client = client
		}
	}
	return agent.NewCompressor(cc)
}

// pluginEngine is a plugin's context engine as the agent sees it: each
// method is a context_engine.call to the plugin's process. A failing call
// is a warning; the turn goes on as if the engine had nothing to do.
type pluginEngine struct {
	p      registry.Provider
	out    agent.Output
	warned sync.Map // method → true once its failure was shown
}

func (e *pluginEngine) Name() string { return e.p.Name }

func (e *pluginEngine) call(ctx context.Context, method string, kwargs map[string]any, timeout time.Duration) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	raw, err := e.p.Conn.Call(ctx, protocol.MethodContextEngineCall, protocol.ContextEngineCallParams{Name: e.p.Name, Method: method, Kwargs: kwargs})
	if err != nil {
		return nil, fmt.Errorf("%s() failed: %s", method, termsafe.Line(err.Error()))
	}
	return raw, nil
}

// note shows a failure of a method called every turn once, not every turn.
func (e *pluginEngine) note(method string, err error) {
	if _, seen := e.warned.LoadOrStore(method, true); !seen && e.out != nil {
		e.out.Progress(fmt.Sprintf("warning: context engine %s (plugin %s): %v", e.p.Name, e.p.Plugin, err))
	}
}

func (e *pluginEngine) UpdateModel(ctx context.Context, model string, contextLength int) {
	if _, err := e.call(ctx, "update_model", map[string]any{"model": model, "context_length": contextLength}, engineCallTimeout); err != nil {
		e.note("update_model", err)
	}
}

func (e *pluginEngine) UpdateFromResponse(ctx context.Context, u llm.Usage) {
	usage := map[string]any{"prompt_tokens": u.PromptTokens, "completion_tokens": u.CompletionTokens, "total_tokens": u.TotalTokens}
	if _, err := e.call(ctx, "update_from_response", map[string]any{"usage": usage}, engineCallTimeout); err != nil {
		e.note("update_from_response", err)
	}
}

func (e *pluginEngine) ShouldCompress(ctx context.Context, promptTokens int) bool {
	raw, err := e.call(ctx, "should_compress", map[string]any{"prompt_tokens": promptTokens}, engineCallTimeout)
	if err != nil {
		e.note("should_compress", err)
		return false
	}
	var due bool
	_ = json.Unmarshal(raw, &due)
	return due
}

func (e *pluginEngine) Compress(ctx context.Context, msgs []llm.Message, o agent.CompressOptions) ([]llm.Message, error) {
	kw := map[string]any{"messages": msgs, "force": o.Force, "memory_context": o.MemoryContext}
	if o.CurrentTokens > 0 {
		kw["current_tokens"] = o.CurrentTokens
	}
	if o.Focus != "" {
		kw["focus_topic"] = o.Focus
	}
	raw, err := e.call(ctx, "compress", kw, engineCompressTimeout)
	if err != nil {
		return nil, err
	}
	var res struct {
		Messages []llm.Message `json:"messages"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("compress() returned something that is not a list of messages: %w", err)
	}
	return res.Messages, nil
}
