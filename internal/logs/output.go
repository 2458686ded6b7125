// Package logs is where the output of one hermes command that is not the
// command's own goes: hermes' warnings and debug records, and every line plugins
// write (stdout, stderr, ctx log records). Each is shown on the terminal's
// stderr — tagged with its plugin, rate limited, and unable to move the cursor —
// and appended to $HERMES_HOME/logs/plugins.log, rotated at 8 MiB.
package logs

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hermes-go/hermes/internal/clock"
	"github.com/hermes-go/hermes/internal/termsafe"
)

// Plugin output lines shown on stderr are rate limited so a plugin that floods its
// stdout cannot drown the terminal; every line still reaches the log file.
const (
	linesPerSecond = 200
	// MaxLogBytes is the size at which plugins.log moves to plugins.log.1.
	MaxLogBytes = 8 << 20
)

// Options configure an Output.
type Options struct {
	Err io.Writer // the terminal's stderr
	// Path returns the plugins.log path, resolved when the first line is
	// written ("" or an error: lines reach the terminal only).
	Path func() (string, error)
	// Debug shows every plugin log record and hermes' debug records
	// (HERMES_PLUGINS_DEBUG).
	Debug bool
	Now   func() time.Time
	// Redact masks secrets in every line before it is shown or kept (nil: none).
	Redact func(string) string
}

// Output is the log of one command; safe for concurrent use (plugin lines
// come from many goroutines).
type Output struct {
	opts Options

	mu      sync.Mutex // serialises the terminal and the file
	file    *os.File
	size    int64 // bytes in file, to rotate it within a run
	failed  bool  // plugins.log cannot be written: do not try on every line
	windows map[string]*rateWindow
}

type rateWindow struct {
	start      time.Time
	shown      int
	suppressed int
}

// New returns an Output; Close it to close plugins.log.
func New(opts Options) *Output {
	if opts.Now == nil {
		opts.Now = clock.Now
	}
	if opts.Err == nil {
		opts.Err = io.Discard
	}
	if opts.Redact == nil {
		opts.Redact = func(s string) string { return s }
	}
	return &Output{opts: opts, windows: map[string]*rateWindow{}}
}

// Warn shows a warning of hermes' own on stderr ("warning: msg"). A message
// starting "debug:" is dropped. The message often quotes a plugin's or an
// index's names, so it is made terminal-safe (newlines kept: some warnings are
// several lines).
func (o *Output) Warn(msg string) {
	if strings.HasPrefix(msg, "debug:") {
		return
	}
	msg = o.opts.Redact(msg)
	o.mu.Lock()
	defer o.mu.Unlock()
	fmt.Fprintf(o.opts.Err, "warning: %s\n", termsafe.Text(msg))
}

// PluginLine receives a plugin's stdout/stderr line ("stdout"/"stderr") or log
// record ("log:<level>"), shows it on stderr tagged with the plugin id, and
// appends it to plugins.log. It is a runtime.LineSink.
func (o *Output) PluginLine(pluginID, stream, line string) {
	line = o.opts.Redact(line)
	o.append(pluginID, stream, line)
	level := ""
	if strings.HasPrefix(stream, "log:") {
		level = strings.TrimPrefix(stream, "log:")
		if !(level == "warning" || level == "error" || level == "critical" || o.opts.Debug) {
			return
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	w := o.windows[pluginID]
	now := o.opts.Now()
	if w == nil || now.Sub(w.start) >= time.Second {
		if w != nil && w.suppressed > 0 {
			fmt.Fprintf(o.opts.Err, "[%s] (%d more lines not shown; see %s)\n", termsafe.Line(pluginID), w.suppressed, o.pathForUser())
		}
		w = &rateWindow{start: now}
		o.windows[pluginID] = w
	}
	if w.shown >= linesPerSecond {
		w.suppressed++
		return
	}
	w.shown++
	// The line cannot move the cursor or rewrite what the terminal shows (a
	// carriage return and "erase line" could hide the tag and pass the text off
	// as hermes' own); its colours stay, closed at the line's end.
	tag := "[" + termsafe.Line(pluginID) + "]"
	text := termsafe.Colour(line)
	if level != "" {
		text = strings.ToUpper(termsafe.Line(level)) + ": " + text
	}
	if strings.HasPrefix(text, tag) {
		// Plugins conventionally prefix their own lines with [name]; don't say it twice.
		fmt.Fprintln(o.opts.Err, text)
		return
	}
	fmt.Fprintln(o.opts.Err, tag+" "+text)
}

// FlushSuppressed reports the lines held back by the rate limit, at the end
// of a command.
func (o *Output) FlushSuppressed() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for id, w := range o.windows {
		if w.suppressed > 0 {
			fmt.Fprintf(o.opts.Err, "[%s] (%d more lines not shown; see %s)\n", termsafe.Line(id), w.suppressed, o.pathForUser())
			w.suppressed = 0
		}
	}
}

func (o *Output) path() string {
	if o.opts.Path == nil {
		return ""
	}
	p, err := o.opts.Path()
	if err != nil {
		return ""
	}
	return p
}

func (o *Output) pathForUser() string {
	if p := o.path(); p != "" {
		return p
	}
	return "plugins.log"
}

// Append writes one line to plugins.log only, its secrets masked.
func (o *Output) Append(source, stream, line string) {
	o.append(source, stream, o.opts.Redact(line))
}

func (o *Output) append(source, stream, line string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.file == nil && (o.failed || !o.open()) {
		return
	}
	n, _ := fmt.Fprintf(o.file, "%s %s %s %s\n", o.opts.Now().UTC().Format(time.RFC3339Nano), source, stream, line)
	o.size += int64(n)
	if o.size > MaxLogBytes {
		// Checked as it grows, not only at open: one run of a plugin that floods
		// its output would otherwise fill the disk.
		o.file.Close()
		o.file = nil
		o.open()
	}
}

// open opens plugins.log for appending, first moving it to plugins.log.1 when it
// is over the cap. Called with mu held.
func (o *Output) open() bool {
	path := o.path()
	if path == "" {
		o.failed = true
		return false
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		o.failed = true
		return false
	}
	if st, err := os.Stat(path); err == nil && st.Size() > MaxLogBytes {
		_ = os.Rename(path, path+".1")
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		o.failed = true
		return false
	}
	o.file, o.size = f, 0
	if st, err := f.Stat(); err == nil && st.Size() <= MaxLogBytes {
		// Over the cap still means the rename failed: count from zero rather than
		// retry it on every line.
		o.size = st.Size()
	}
	return true
}

// Close closes plugins.log; a later line opens it again.
func (o *Output) Close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.file != nil {
		o.file.Close()
		o.file = nil
	}
}

// Redirect sends what goes to the terminal's stderr to w until restore is
// called (the full-screen chat shows these lines in its transcript: written
// to the terminal beside it they would tear its drawing).
func (o *Output) Redirect(w io.Writer) (restore func()) {
	o.mu.Lock()
	old := o.opts.Err
	o.opts.Err = w
	o.mu.Unlock()
	return func() {
		o.mu.Lock()
		o.opts.Err = old
		o.mu.Unlock()
	}
}
