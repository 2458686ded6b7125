package shellhooks

import (
	"context"
	"log/slog"
	"sync"
)

// captureLog is a logger that appends each warning's message to out.
func captureLog(out *[]string) *slog.Logger {
	return slog.New(&captureHandler{out: out, mu: &sync.Mutex{}})
}

type captureHandler struct {
	out *[]string
	mu  *sync.Mutex
}

func (h *captureHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (h *captureHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	*h.out = append(*h.out, r.Message)
	return nil
}
func (h *captureHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *captureHandler) WithGroup(string) slog.Handler      { return h }
