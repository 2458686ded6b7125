package logs

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// plugins.log stays bounded within one run too: a plugin flooding its output
// moves the log to plugins.log.1 whenever it passes the cap, and the newest lines
// are always in plugins.log.
func TestPluginLogRotatesDuringARun(t *testing.T) {
	line := strings.Repeat("x", 1000)
	for _, c := range []struct {
		name     string
		existing int64 // bytes already in plugins.log at start
		write    int64 // bytes of lines this run writes
	}{
		{"fresh, one cap's worth and a half", 0, MaxLogBytes * 3 / 2},
		{"fresh, three caps' worth", 0, 3 * MaxLogBytes},
		{"half full at start", MaxLogBytes / 2, MaxLogBytes},
		{"over the cap at start", MaxLogBytes + 1, MaxLogBytes / 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			hh := t.TempDir()
			logs := filepath.Join(hh, "logs")
			path := filepath.Join(logs, "plugins.log")
			if c.existing > 0 {
				if err := os.MkdirAll(logs, 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, bytes.Repeat([]byte("old\n"), int(c.existing/4)+1), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			a := New(Options{Err: io.Discard, Path: func() (string, error) { return path, nil }})
			defer a.Close()
			n := c.write / int64(len(line))
			for i := int64(0); i < n; i++ {
				a.Append("flooder", "stdout", line)
			}
			a.Append("flooder", "stdout", "the last line")
			a.Close()

			slack := int64(len(line) + 100) // one line's worth past the cap
			for _, p := range []string{path, path + ".1"} {
				st, err := os.Stat(p)
				if err != nil {
					if p == path || c.existing+c.write <= MaxLogBytes {
						continue
					}
					t.Fatalf("no %s after writing %d bytes: %v", filepath.Base(p), c.existing+c.write, err)
				}
				if st.Size() > MaxLogBytes+slack {
					t.Errorf("%s is %d bytes, over the cap of %d", filepath.Base(p), st.Size(), MaxLogBytes)
				}
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasSuffix(b, []byte(" flooder stdout the last line\n")) {
				t.Errorf("plugins.log does not end with the last line written: %q", b[max(0, len(b)-80):])
			}
		})
	}
}

// What reaches the terminal's stderr cannot move the cursor or rewrite what it
// shows: plugin lines (colour kept, closed with a reset), ctx log records, the
// plugin's tag, and hermes' warnings quoting hostile names.
func TestTerminalLinesAreSafe(t *testing.T) {
	tests := []struct {
		name  string
		write func(o *Output)
		want  string
	}{
		{"plain line", func(o *Output) { o.PluginLine("p", "stdout", "plain text\twith a tab") }, "[p] plain text\twith a tab\n"},
		{"forged hermes line", func(o *Output) { o.PluginLine("p", "stdout", "\r\x1b[2Kwarning: forged") },
			"[p] \\r\\x1b[2Kwarning: forged\n"},
		{"colour kept and closed", func(o *Output) { o.PluginLine("p", "stderr", "\x1b[1;31mred") }, "[p] \x1b[1;31mred\x1b[0m\n"},
		{"window title", func(o *Output) { o.PluginLine("p", "stdout", "\x1b]0;title\a") }, "[p] \\x1b]0;title\\x07\n"},
		{"log record", func(o *Output) { o.PluginLine("p", "log:warning", "\x1b[2Jgone\u202e") }, "[p] WARNING: \\x1b[2Jgone\\u202e\n"},
		{"hostile plugin id", func(o *Output) { o.PluginLine("p\x1b[2K\r", "stdout", "x") }, "[p\\x1b[2K\\r] x\n"},
		{"warning quoting a name", func(o *Output) { o.Warn("plugin 'x\x1b[1A\x1b[2K' failed\nsecond line") },
			"warning: plugin 'x\\x1b[1A\\x1b[2K' failed\nsecond line\n"},
		{"slog warning", func(o *Output) { o.Logger().Warn("hook of \u009b2J raised") }, "warning: hook of \\u009b2J raised\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var errOut bytes.Buffer
			o := New(Options{Err: &errOut})
			tt.write(o)
			if got := errOut.String(); got != tt.want {
				t.Errorf("stderr %q, want %q", got, tt.want)
			}
		})
	}
}
