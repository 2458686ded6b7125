package pluginsdk

import (
	"log/slog"
	"testing"
)

// The host shows plugin log records of level "warning" and above on the terminal,
// using Python logging's names; slog's own names ("WARN") would hide warnings.
func TestLevelNameMatchesPythonLogging(t *testing.T) {
	for _, c := range []struct {
		level slog.Level
		want  string
	}{
		{slog.LevelDebug, "debug"},
		{slog.LevelDebug + 2, "debug"},
		{slog.LevelInfo, "info"},
		{slog.LevelWarn, "warning"},
		{slog.LevelError, "error"},
		{slog.LevelError + 4, "error"},
	} {
		if got := levelName(c.level); got != c.want {
			t.Errorf("levelName(%v) = %q, want %q", c.level, got, c.want)
		}
	}
}
