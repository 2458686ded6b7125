package hostapi

import (
	"context"
	"strings"

	"github.com/hermes-go/hermes/pkg/protocol"
)

// logRecord serves ctx log records (a plugin's logging.getLogger output).
func logRecord(_ context.Context, s *Session, lp protocol.LogParams) (any, error) {
	if s.h.opts.Sink != nil {
		s.h.opts.Sink(s.p.ID(), "log:"+logLevel(lp.Level), lp.Message)
	}
	return nil, nil
}

// logLevel maps the level names other runtimes use (slog's "WARN", "warn", "fatal")
// to Python logging's, which the host's output filter speaks.
func logLevel(level string) string {
	switch l := strings.ToLower(strings.TrimSpace(level)); l {
	case "warn":
		return "warning"
	case "fatal", "crit":
		return "critical"
	case "":
		return "info"
	default:
		return l
	}
}
