package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/testutil/pty"
)

// Start-up of the full-screen chat to a drawn prompt, beside `hermes
// --version` to its exit, each on a pseudo-terminal of its own:
//
//	go test ./internal/cli -run '^$' -bench 'StartOnTerminal' -benchtime 20x -count 3
//
// The hermes under test is the test binary (TestMain), and the floor is in
// it; the shipped binary (cmd/hermes, built here) runs --version and the chat
// too ("shipped-"): it imports internal/startmem, which tests do not, and its
// start-up memory policy makes a page fault cheaper, which the chat (more
// pages touched) gains from more than --version does.
//
// Each iteration runs them all once, one after another, so they share the
// machine's load of that moment (this machine is shared: a run of twenty
// of one, then twenty of the next, compared loads as much as programs). It
// reports each one's median in ms and the ratios to its binary's --version;
// ns/op is all of them together.
func BenchmarkStartOnTerminal(b *testing.B) {
	shipped := filepath.Join(b.TempDir(), "hermes")
	if out, err := exec.Command("go", "build", "-o", shipped, "../../cmd/hermes").CombinedOutput(); err != nil {
		b.Fatalf("go build ./cmd/hermes: %v\n%s", err, out)
	}
	home := b.TempDir()
	hh := filepath.Join(home, ".hermes")
	if err := os.MkdirAll(hh, 0o700); err != nil {
		b.Fatal(err)
	}
	// No plugins; the model is never called at start-up.
	cfg := "model:\n  default: fake-model\n  base_url: http://127.0.0.1:9/v1\nplugins:\n  enabled: []\n  disabled: [datetime]\n"
	if err := os.WriteFile(filepath.Join(hh, "config.yaml"), []byte(cfg), 0o600); err != nil {
		b.Fatal(err)
	}
	env := termEnv(home, "TERM=xterm-256color")
	runs := []struct {
		name  string
		bin   string
		args  []string
		until string // shown when ready; "" = run to the exit
	}{
		{"version", "hermes", []string{"--version"}, ""},
		// Ready: the status line, drawn once the chat is open (before, it says "starting…").
		{"chat", "hermes", []string{"chat"}, "fake-model (custom)"},
		{"plain", "hermes", []string{"chat", "--plain"}, "› "},
		// The floor: a Bubble Tea program that draws one line (teafloor_test.go).
		{"floor", "teafloor", nil, "floor ready"},
		{"shipped-version", shipped, []string{"--version"}, ""},
		{"shipped-chat", shipped, []string{"chat"}, "fake-model (custom)"},
	}
	took := make([][]time.Duration, len(runs))
	for b.Loop() {
		for i, r := range runs {
			start := time.Now()
			runOnTerminal(b, env, r.until, r.bin, r.args...)
			took[i] = append(took[i], time.Since(start))
		}
	}
	med := make([]float64, len(runs))
	for i, r := range runs {
		med[i] = median(took[i])
		b.ReportMetric(med[i], r.name+"-ms")
	}
	for _, r := range [][3]int{{1, 0}, {2, 0}, {3, 0}, {5, 4}} {
		b.ReportMetric(med[r[0]]/med[r[1]], runs[r[0]].name+"/"+runs[r[1]].name)
	}
}

// median in ms.
func median(ds []time.Duration) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return float64(s[len(s)/2].Microseconds()) / 1000
}

// runOnTerminal starts hermes on a new terminal and returns once it showed
// until (then kills it) or, with until "", once it exited.
func runOnTerminal(b *testing.B, env []string, until, name string, args ...string) {
	bin, err := exec.LookPath(name)
	if err != nil {
		b.Fatal(err)
	}
	master, tty := pty.Open(b)
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	seen := make(chan struct{})
	go func() {
		var out []byte
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			out = append(out, buf[:n]...)
			if until != "" && bytes.Contains(out, []byte(until)) {
				close(seen)
				return
			}
			if err != nil {
				return
			}
		}
	}()
	if until == "" {
		if err := cmd.Wait(); err != nil {
			b.Fatal(err)
		}
		tty.Close()
		master.Close()
		return
	}
	select {
	case <-seen:
	case <-time.After(guard):
		b.Fatal("the chat never drew its prompt")
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	tty.Close()
	master.Close()
}
