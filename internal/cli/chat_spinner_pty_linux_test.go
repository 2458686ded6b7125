package cli_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/app"
	"github.com/hermes-go/hermes/internal/cli"
	"github.com/hermes-go/hermes/internal/llm/llmtest"
	"github.com/hermes-go/hermes/internal/testutil/pty"
	"github.com/hermes-go/hermes/internal/testutil/syncbuf"
)

// TestChatSpinnerOnTerminal: with stderr a terminal, waiting for a hung model
// shows a spinner that says what is happening (a retry and why), and the
// spinner is gone before the answer is written. Off a terminal the same retry
// is a line of its own (chat_model_progress.txtar).
func TestChatSpinnerOnTerminal(t *testing.T) {
	master, tty := pty.Open(t)
	var shown syncbuf.Buffer
	go func() { _, _ = io.Copy(&shown, master) }()

	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Hang(), llmtest.Text("the answer"))
	home := filepath.Join(t.TempDir(), "hermes")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := "model:\n  default: fake-model\n  base_url: " + srv.URL + "\n  request_timeout: 1\n  max_retries: 1\n"
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	f := app.New(cli.Version)
	f.Env = func(k string) string {
		if k == "HERMES_HOME" {
			return home
		}
		return os.Getenv(k)
	}
	var out syncbuf.Buffer
	f.IO.In, f.IO.Out, f.IO.Err = strings.NewReader(""), &out, tty
	f.IO.InTTY, f.IO.OutTTY, f.IO.ErrTTY = false, false, true

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if rc := cli.Run(ctx, f, []string{"chat", "-q", "hello"}); rc != 0 {
		t.Fatalf("rc %d; the terminal showed %q", rc, shown.String())
	}
	if got := out.String(); got != "the answer\n" {
		t.Errorf("stdout %q, want the answer", got)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(shown.String(), "session ") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	screen := shown.String()
	for _, want := range []string{"waiting for fake-model (", "model did not answer in 1 s, retry 1/1 ("} {
		if !strings.Contains(screen, want) {
			t.Errorf("the terminal never showed %q; it showed %q", want, screen)
		}
	}
	if strings.Contains(screen, "retry 1/1\r\n") {
		t.Errorf("on a terminal the retry is the spinner's status, not a line of its own: %q", screen)
	}
	// The spinner's line is erased before anything else is written.
	last := strings.LastIndex(screen, "retry 1/1 (")
	if erase := strings.Index(screen[last:], "\r\x1b[K"); erase < 0 || strings.Contains(screen[last:last+erase], "\n") {
		t.Errorf("the spinner was not erased after its last frame: %q", screen[last:])
	}
}
