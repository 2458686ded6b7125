package app

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/internal/session"
)

// ModelPrice is a model's price in USD per million tokens (config.yaml
// model.pricing.<model>: {input: 3, output: 15}).
type ModelPrice struct {
	Input, Output float64
}

// Cost is what u cost at this price.
func (p ModelPrice) Cost(u llm.Usage) float64 {
	return (float64(u.PromptTokens)*p.Input + float64(u.CompletionTokens)*p.Output) / 1e6
}

// parsePricing reads model.pricing; a malformed entry is an error naming it.
func parsePricing(cfg map[string]any) (map[string]ModelPrice, error) {
	model, _ := cfg["model"].(map[string]any)
	raw, ok := model["pricing"]
	if !ok || raw == nil {
		return nil, nil
	}
	entries, ok := raw.(map[string]any)
	if !ok {
		return nil, Failf("Error: config.yaml model.pricing must map model names to prices, e.g.\n  model:\n    pricing:\n      gpt-4o: {input: 2.5, output: 10}   # USD per million tokens")
	}
	out := map[string]ModelPrice{}
	for name, v := range entries {
		m, ok := v.(map[string]any)
		in, okIn := toFloat(m["input"])
		outp, okOut := toFloat(m["output"])
		if !ok || !okIn || !okOut || in < 0 || outp < 0 {
			return nil, Failf("Error: config.yaml model.pricing.%s must be {input: N, output: N}, USD per million prompt and completion tokens (got %v)", name, v)
		}
		out[name] = ModelPrice{Input: in, Output: outp}
	}
	return out, nil
}

// recordUsage stores the token usage of turn t in state.db.
func (c *Chat) recordUsage(ctx context.Context, t *Turn) {
	if err := storeTurnUsage(ctx, c.store.Sessions(), c.sess.ID, c.model, c.pricing, t); err != nil {
		c.h.f.Warn("could not record the turn's token usage: " + err.Error())
	}
}

// storeTurnUsage records what turn t of session id used, priced by pricing
// when it names model. A turn that never reached the model records nothing.
// usageStore is what recording a turn's usage needs of the store.
type usageStore interface {
	RecordUsage(ctx context.Context, id string, u session.TurnUsage) error
	LastUserSeq(ctx context.Context, id string) (int, error)
}

func storeTurnUsage(ctx context.Context, st usageStore, id, model string, pricing map[string]ModelPrice, t *Turn) error {
	if t.APICalls == 0 {
		return nil
	}
	ctx = context.WithoutCancel(ctx)
	seq, err := st.LastUserSeq(ctx, id)
	if err != nil || seq == 0 {
		seq = t.UserIndex() + 1
	}
	u := session.TurnUsage{MessageSeq: seq, Model: model, APICalls: t.APICalls,
		PromptTokens: t.Usage.PromptTokens, CompletionTokens: t.Usage.CompletionTokens, TotalTokens: t.Usage.TotalTokens}
	if u.TotalTokens == 0 {
		u.TotalTokens = u.PromptTokens + u.CompletionTokens
	}
	if p, ok := pricing[model]; ok {
		cost := p.Cost(t.Usage)
		u.CostUSD = &cost
	}
	return st.RecordUsage(ctx, id, u)
}

// Usage is the token usage of each turn of the current session, oldest first.
func (c *Chat) Usage(ctx context.Context) ([]session.TurnUsage, error) {
	return c.store.Sessions().Usage(ctx, c.sess.ID)
}

// ContextLength is model.context_length (0: not configured).
func (c *Chat) ContextLength() int { return c.contextLen }

// ErrNothingToUndo is returned by Undo for a session with no exchange yet.
var ErrNothingToUndo = errors.New("nothing to undo: the session has no message yet")

// Undo drops the last exchange (the last user message and every message after
// it) from the session and from state.db; it returns the dropped message as
// the user typed it.
func (c *Chat) Undo(ctx context.Context) (string, error) {
	seq, err := c.store.Sessions().LastUserSeq(ctx, c.sess.ID)
	if err != nil {
		return "", err
	}
	_, text, ok := c.sess.DropLastExchange()
	if !ok || seq == 0 {
		return "", ErrNothingToUndo
	}
	if err := c.store.Sessions().TruncateFrom(ctx, c.sess.ID, seq); err != nil {
		return "", err
	}
	if text == c.lastSent && c.lastInput != "" {
		text = c.lastInput // what the user typed, its @ references not yet expanded
	}
	return text, nil
}

// SetTitle names the current session; "" shows the current title.
func (c *Chat) SetTitle(ctx context.Context, title string) (string, error) {
	st := c.store.Sessions()
	if title != "" {
		if err := st.SetTitle(ctx, c.sess.ID, title); err != nil {
			return "", err
		}
	}
	sess, err := st.Get(ctx, c.sess.ID)
	if err != nil {
		return "", err
	}
	return sess.Title, nil
}

// RecentSessions are the n most recently updated sessions.
func (c *Chat) RecentSessions(ctx context.Context, n int) ([]session.Session, error) {
	return c.store.Sessions().List(ctx, n)
}

// History is a copy of the current session's messages.
func (c *Chat) History() []llm.Message { return c.sess.History() }

// Resumed reports whether the current session was continued from the store.
func (c *Chat) Resumed() bool { return c.sess.Resumed }

// Provider is the provider the chat's model is served by.
func (c *Chat) Provider() string { return c.provider }

// SwitchModel makes later turns of this chat use another model: "model", or
// "provider:model" for a provider hermes knows (its endpoint and key then
// come from the provider, not model.base_url). The session goes on.
func (c *Chat) SwitchModel(ctx context.Context, spec string) error {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return errors.New("name the model: /model NAME or /model PROVIDER:NAME")
	}
	section := maps.Clone(c.modelSection)
	if section == nil {
		section = map[string]any{}
	}
	if p, m, ok := strings.Cut(spec, ":"); ok {
		if pp, ok := c.h.pluginProvider(p); ok {
			name := pp.Name
			if m == "" {
				return fmt.Errorf("/model %s names a provider but no model: /model %s:NAME", spec, p)
			}
			if !strings.EqualFold(c.provider, name) {
				delete(section, "base_url")
				delete(section, "api_key")
			}
			section["provider"], spec = name, m
		}
	}
	section["default"] = spec
	lcfg, err := c.h.llmConfig(ctx, section, c.dotenv)
	if err != nil {
		return err
	}
	c.ag.ObserveAttempts(&lcfg)
	client, err := llm.New(lcfg)
	if err != nil {
		return err
	}
	c.ag.SetClient(client)
	c.ag.SetModel(lcfg.Model, lcfg.Provider, lcfg.BaseURL)
	// Plugins' ctx.llm calls without a task of their own follow the chat's model.
	c.h.agent.setLLM(c.h.pluginLLM(client, lcfg).Serve)
	c.model, c.provider, c.modelSection = lcfg.Model, lcfg.Provider, section
	return nil
}
