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

func TestTerminalSafe(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text\twith a tab", "plain text\twith a tab"},
		{"\r\x1b[2Kwarning: forged", "^M^[[2Kwarning: forged"},
		{"bell\a nul\x00 del\x7f", "bell^G nul^@ del^?"},
		{"\x1b[1;31mred\x1b[0m ok", "\x1b[1;31mred\x1b[0m ok\x1b[0m"},
		{"\x1b]0;title\a", "^[]0;title^G"},
		{"trailing esc \x1b", "trailing esc ^["},
	}
	for _, tt := range tests {
		if got := TerminalSafe(tt.in); got != tt.want {
			t.Errorf("TerminalSafe(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
