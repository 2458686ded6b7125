package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"

	"github.com/hermes-go/hermes/internal/logs"
	"github.com/hermes-go/hermes/internal/termsafe"
)

// gatewayLog is $HERMES_HOME/logs/gateway.log (rotated as plugins.log is),
// with every info line also on stderr, which a service manager keeps. Values
// come from platforms and plugins: each line is made terminal-safe and its
// secrets masked before it is written anywhere.
type gatewayLog struct {
	out    *logs.Output
	logger *slog.Logger
}

func openGatewayLog(f *Factory, dir string) *gatewayLog {
	out := logs.New(logs.Options{Now: f.Now, Redact: f.Redactor().String,
		Path: func() (string, error) { return filepath.Join(dir, "gateway.log"), nil }})
	level := slog.LevelInfo
	if Truthy(f.Env("HERMES_GATEWAY_DEBUG")) {
		level = slog.LevelDebug
	}
	h := &gatewayHandler{out: out, err: f.IO.Err, level: level, redact: f.Redactor().String, mu: &sync.Mutex{}}
	return &gatewayLog{out: out, logger: slog.New(h)}
}

func (l *gatewayLog) close() { l.out.Close() }

type gatewayHandler struct {
	out    *logs.Output
	err    io.Writer
	level  slog.Level
	redact func(string) string
	attrs  []slog.Attr
	mu     *sync.Mutex // serialises stderr
}

func (h *gatewayHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func (h *gatewayHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	add := func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%s", a.Key, quoteValue(a.Value.String()))
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	line := termsafe.Line(h.redact(b.String()))
	level := strings.ToLower(r.Level.String())
	h.out.Append("gateway", level, line)
	h.mu.Lock()
	defer h.mu.Unlock()
	fmt.Fprintf(h.err, "%s %s\n", level, line)
	return nil
}

// quoteValue quotes a value with spaces, so a log line splits into its fields.
func quoteValue(v string) string {
	if v == "" || strings.ContainsAny(v, " \t\"=") {
		return fmt.Sprintf("%q", v)
	}
	return v
}

func (h *gatewayHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr(nil), h.attrs...), as...)
	return &c
}

func (h *gatewayHandler) WithGroup(string) slog.Handler { return h }
