package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Plugin output lines shown on stderr are rate limited so a plugin that floods its
// stdout cannot drown the terminal; every line still reaches the log file.
const (
	linesPerSecond = 200
	maxLogBytes    = 8 << 20
)

type rateWindow struct {
	start      time.Time
	shown      int
	suppressed int
}

// pluginLine receives plugin stdout/stderr lines ("stdout"/"stderr") and log records
// ("log:<level>"), shows them on hermes' stderr tagged with the plugin id, and appends
// them to $HERMES_HOME/logs/plugins.log.
func (a *App) pluginLine(pluginID, stream, line string) {
	a.appendLog(pluginID, stream, line)
	show := true
	level := ""
	if strings.HasPrefix(stream, "log:") {
		level = strings.TrimPrefix(stream, "log:")
		show = level == "warning" || level == "error" || level == "critical" || truthy(a.Env("HERMES_PLUGINS_DEBUG"))
	}
	if !show {
		return
	}
	a.logMu.Lock()
	defer a.logMu.Unlock()
	if a.windows == nil {
		a.windows = map[string]*rateWindow{}
	}
	w := a.windows[pluginID]
	now := time.Now()
	if w == nil || now.Sub(w.start) >= time.Second {
		if w != nil && w.suppressed > 0 {
			fmt.Fprintf(a.IO.Err, "[%s] (%d more lines not shown; see %s)\n", pluginID, w.suppressed, a.pluginLogPath())
		}
		w = &rateWindow{start: now}
		a.windows[pluginID] = w
	}
	if w.shown >= linesPerSecond {
		w.suppressed++
		return
	}
	w.shown++
	tag := "[" + pluginID + "]"
	text := terminalSafe(line)
	if level != "" {
		text = strings.ToUpper(level) + ": " + line
	}
	if strings.HasPrefix(text, tag) {
		// Plugins conventionally prefix their own lines with [name]; don't say it twice.
		fmt.Fprintln(a.IO.Err, text)
		return
	}
	fmt.Fprintln(a.IO.Err, tag+" "+text)
}

// flushSuppressed reports lines that were held back at the end of a command.
func (a *App) flushSuppressed() {
	a.logMu.Lock()
	defer a.logMu.Unlock()
	for id, w := range a.windows {
		if w.suppressed > 0 {
			fmt.Fprintf(a.IO.Err, "[%s] (%d more lines not shown; see %s)\n", id, w.suppressed, a.pluginLogPath())
			w.suppressed = 0
		}
	}
}

func (a *App) pluginLogPath() string {
	h, err := a.Home()
	if err != nil {
		return "plugins.log"
	}
	return filepath.Join(h.LogsDir(), "plugins.log")
}

func (a *App) appendLog(pluginID, stream, line string) {
	a.logMu.Lock()
	defer a.logMu.Unlock()
	if a.logFile == nil && (a.logFailed || !a.openLog()) {
		return
	}
	n, _ := fmt.Fprintf(a.logFile, "%s %s %s %s\n", time.Now().UTC().Format(time.RFC3339Nano), pluginID, stream, line)
	a.logSize += int64(n)
	if a.logSize > maxLogBytes {
		// Checked as it grows, not only at open: one run of a plugin that floods
		// its output would otherwise fill the disk.
		a.logFile.Close()
		a.logFile = nil
		a.openLog()
	}
}

// openLog opens plugins.log for appending, first moving it to plugins.log.1 when it
// is over the cap. Called with logMu held.
func (a *App) openLog() bool {
	path := a.pluginLogPath()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		a.logFailed = true
		return false
	}
	if st, err := os.Stat(path); err == nil && st.Size() > maxLogBytes {
		_ = os.Rename(path, path+".1")
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		a.logFailed = true
		return false
	}
	a.logFile, a.logSize = f, 0
	if st, err := f.Stat(); err == nil && st.Size() <= maxLogBytes {
		// Over the cap still means the rename failed: count from zero rather than
		// retry it on every line.
		a.logSize = st.Size()
	}
	return true
}

// terminalSafe makes a plugin's line unable to move the cursor or rewrite what
// the terminal shows (a carriage return and "erase line" could hide the plugin's
// tag and pass its text off as hermes' own): control characters are shown in
// caret notation (^M, ^[); colour sequences (ESC [ ... m) stay, and a line that
// used one ends with a reset.
func terminalSafe(line string) string {
	clean := true
	for i := 0; i < len(line); i++ {
		if c := line[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			clean = false
			break
		}
	}
	if clean {
		return line
	}
	var b strings.Builder
	coloured := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c == 0x1b {
			if n := sgrLen(line[i:]); n > 0 {
				b.WriteString(line[i : i+n])
				i += n - 1
				coloured = true
				continue
			}
		}
		switch {
		case c == '\t':
			b.WriteByte(c)
		case c < 0x20:
			b.WriteByte('^')
			b.WriteByte(c + '@')
		case c == 0x7f:
			b.WriteString("^?")
		default:
			b.WriteByte(c)
		}
	}
	if coloured {
		b.WriteString("\x1b[0m")
	}
	return b.String()
}

// sgrLen is the length of the colour sequence (ESC [ digits and ; m) s starts
// with, or 0.
func sgrLen(s string) int {
	if len(s) < 3 || s[1] != '[' {
		return 0
	}
	for i := 2; i < len(s); i++ {
		switch c := s[i]; {
		case c == 'm':
			return i + 1
		case c == ';' || (c >= '0' && c <= '9'):
		default:
			return 0
		}
	}
	return 0
}
