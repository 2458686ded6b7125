package logs

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/hermes-go/hermes/internal/termsafe"
)

// Logger is hermes' own structured log over o: a warning (a hook that raised
// or timed out, a plugin restarted) is shown on stderr as "warning: ..." the
// moment it happens and kept in plugins.log; debug records only with Debug,
// with their attributes.
func (o *Output) Logger() *slog.Logger {
	level := slog.LevelWarn
	if o.opts.Debug {
		level = slog.LevelDebug
	}
	return slog.New(&handler{o: o, level: level})
}

type handler struct {
	o     *Output
	level slog.Level
	attrs []slog.Attr
}

func (h *handler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func (h *handler) Handle(_ context.Context, r slog.Record) error {
	msg := r.Message
	if r.Level < slog.LevelWarn {
		var b strings.Builder
		b.WriteString(msg)
		add := func(a slog.Attr) bool {
			fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
			return true
		}
		for _, a := range h.attrs {
			add(a)
		}
		r.Attrs(add)
		line := h.o.opts.Redact(b.String())
		h.o.append("hermes", "debug", line)
		h.o.mu.Lock()
		defer h.o.mu.Unlock()
		fmt.Fprintf(h.o.opts.Err, "debug: %s\n", termsafe.Text(line))
		return nil
	}
	msg = h.o.opts.Redact(msg)
	h.o.append("hermes", "warning", msg)
	h.o.Warn(msg)
	return nil
}

func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	return &handler{o: h.o, level: h.level, attrs: append(append([]slog.Attr(nil), h.attrs...), as...)}
}

func (h *handler) WithGroup(string) slog.Handler { return h }
