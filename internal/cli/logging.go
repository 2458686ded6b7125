package cli

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
)

// userLog is the slog handler behind hermes' own log: a warning (a hook that
// raised or timed out, a plugin restarted) is shown on stderr as
// "warning: ..." the moment it happens and kept in plugins.log; debug records
// only with HERMES_PLUGINS_DEBUG, with their attributes.
type userLog struct {
	app   *App
	level slog.Level
	attrs []slog.Attr
}

func (h *userLog) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func (h *userLog) Handle(_ context.Context, r slog.Record) error {
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
		h.app.appendLog("hermes", "debug", b.String())
		h.app.logMu.Lock()
		defer h.app.logMu.Unlock()
		fmt.Fprintf(h.app.IO.Err, "debug: %s\n", b.String())
		return nil
	}
	h.app.appendLog("hermes", "warning", msg)
	h.app.warn(msg)
	return nil
}

func (h *userLog) WithAttrs(as []slog.Attr) slog.Handler {
	return &userLog{app: h.app, level: h.level, attrs: append(append([]slog.Attr(nil), h.attrs...), as...)}
}

func (h *userLog) WithGroup(string) slog.Handler { return h }
