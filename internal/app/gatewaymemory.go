package app

// The gateway's memory provider and context engine: the pieces chat has too,
// fitted to many sessions and no terminal.

import (
	"context"
	"log/slog"
	"strings"

	"github.com/hermes-go/hermes/internal/agent"
	"github.com/hermes-go/hermes/internal/llm"
)

// logProgress takes a context engine's status lines (its warnings) to the
// gateway log: a gateway has no terminal to show them on.
type logProgress struct{ log *slog.Logger }

func (l logProgress) Text(string) {}

func (l logProgress) Progress(s string) { l.log.Warn("gateway: " + s) }

// gatewaySections are a new gateway session's system prompt sections: the
// memory snapshot (and the provider's block when its tools are offered),
// then the plugins' sections, as in chat.
func gatewaySections(h *Host, memToolsOn bool) func(context.Context, map[string]any) string {
	return func(ctx context.Context, info map[string]any) string {
		var parts []string
		if b := h.memory.SystemPrompt(ctx, memToolsOn); b != "" {
			parts = append(parts, b)
		}
		if s := h.Registry.RenderSystemPromptSections(ctx, info); s != "" {
			parts = append(parts, s)
		}
		return strings.Join(parts, "\n\n")
	}
}

// endMemorySession tells the memory provider a session ended (/new): its
// history (from memory, else state.db) to on_session_end, then the switch.
// The manager skips a session no turn of this process ran.
func (e *gatewayEngine) endMemorySession(ctx context.Context, old string, live *agent.Session, id string) {
	if e.h.memory.External() == nil {
		return
	}
	var msgs []llm.Message
	if live != nil {
		msgs = live.Messages
	} else if stored, err := e.store.Messages(ctx, old); err == nil {
		msgs = stored
	}
	e.h.memory.SessionEnd(ctx, old, messagesForMemory(msgs))
	e.h.memory.SessionSwitch(ctx, id, old, true)
}
