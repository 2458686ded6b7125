package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/app"
	"github.com/hermes-go/hermes/internal/cli"
	"github.com/hermes-go/hermes/internal/llm/llmtest"
	"github.com/hermes-go/hermes/internal/testutil/pty"
	"github.com/hermes-go/hermes/internal/testutil/syncbuf"
)

// ptyHermes runs hermes commands with every standard stream on one real
// terminal, as a user at it would, and keeps what the terminal was sent.
type ptyHermes struct {
	t      *testing.T
	home   string
	master *os.File
	tty    *os.File
	shown  syncbuf.Buffer // everything hermes wrote to the terminal
}

func newPtyHermes(t *testing.T, config string) *ptyHermes {
	master, tty := pty.Open(t)
	h := &ptyHermes{t: t, home: filepath.Join(t.TempDir(), "hermes"), master: master, tty: tty}
	if err := os.MkdirAll(h.home, 0o755); err != nil {
		t.Fatal(err)
	}
	h.write("config.yaml", config)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			if n > 0 {
				h.shown.Write(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()
	return h
}

func (h *ptyHermes) write(rel, body string) {
	h.t.Helper()
	p := filepath.Join(h.home, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

// start runs hermes args on the terminal; the channel gets its exit code.
func (h *ptyHermes) start(args ...string) <-chan int {
	f := app.New(cli.Version)
	f.Env = func(k string) string {
		switch k {
		case "HERMES_HOME":
			return h.home
		case "HERMES_CHAT_PLAIN": // these tests are of the line mode's prompt
			return "1"
		}
		return os.Getenv(k)
	}
	f.IO.In, f.IO.Out, f.IO.Err = h.tty, h.tty, h.tty
	f.IO.InTTY, f.IO.OutTTY, f.IO.ErrTTY = true, true, true
	done := make(chan int, 1)
	go func() { done <- cli.Run(context.Background(), f, args) }()
	return done
}

// waitFor waits until the terminal has been sent s.
func (h *ptyHermes) waitFor(s string, done <-chan int) {
	h.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(h.shown.String(), s) {
		select {
		case rc := <-done:
			h.t.Fatalf("hermes ended (rc %d) before showing %q; the terminal got:\n%s", rc, s, h.shown.String())
		default:
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("the terminal never got %q; it got:\n%s", s, h.shown.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (h *ptyHermes) typeLine(s string) {
	h.t.Helper()
	if _, err := h.master.Write([]byte(s + "\n")); err != nil {
		h.t.Fatal(err)
	}
}

func (h *ptyHermes) wait(done <-chan int) int {
	h.t.Helper()
	select {
	case rc := <-done:
		return rc
	case <-time.After(60 * time.Second):
		h.t.Fatalf("hermes did not finish; the terminal got:\n%s", h.shown.String())
	}
	return -1
}

// obeyed matches what a terminal acts on besides printing: controls other than
// newline and tab (a CR only before a newline, as the terminal's own output
// processing sends it), C1 controls and bidi controls.
var obeyed = regexp.MustCompile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u0080-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]|\r[^\n]")

// TestChatReplyCannotHideApprovalWarning: a model reply that tries to conceal,
// erase or scroll over the dangerous-command warning (in its streamed text,
// split across chunks, and in the command itself) cannot: the terminal is sent
// no control sequence of the model's, the warning and the whole command are
// shown, escaped, and the denied command does not run. Before, the reply and the
// command reached the terminal raw.
func TestChatReplyCannotHideApprovalWarning(t *testing.T) {
	srv := llmtest.NewServer(t)
	h := newPtyHermes(t, "model:\n  default: fake-model\n  base_url: "+srv.URL+"\nplugins:\n  enabled: []\n")
	victim := filepath.Join(t.TempDir(), "precious")
	if err := os.WriteFile(victim, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The reply conceals what follows it, retitles the window and clears the
	// screen; the command hides its real part behind CR, erase-line and cursor-up.
	hiding := "Tidying up.\x1b[8m\x1b]0;all good\x07\x1b[2J\x1b[H\u202e"
	command := "rm -rf " + victim + " #\r\x1b[2K\x1b[1A\x1b[2K\x1b[1A\x1b[2Kls -la"
	srv.Enqueue(
		llmtest.Reply{Content: hiding, ChunkSize: 3, ToolCalls: []llmtest.CallReply{{Name: "terminal", Arguments: map[string]any{"command": command}}}},
		llmtest.Text("Understood, I left it."),
	)
	done := h.start("chat")
	h.waitFor("› ", done)
	h.typeLine("clean up please")
	h.waitFor("Choice [o/s/a/D]: ", done)
	h.typeLine("d")
	h.waitFor("Understood, I left it.", done)
	if _, err := h.master.Write([]byte{4}); err != nil { // Ctrl-D: leave
		t.Fatal(err)
	}
	if rc := h.wait(done); rc != 0 {
		t.Fatalf("hermes chat: rc %d; the terminal got:\n%s", rc, h.shown.String())
	}

	shown := h.shown.String()
	if loc := obeyed.FindStringIndex(shown); loc != nil {
		t.Errorf("the terminal was sent %q (at %d) from the model:\n%q", shown[loc[0]:loc[1]], loc[0], shown)
	}
	for _, want := range []string{
		`Tidying up.\x1b[8m\x1b]0;all good\x07\x1b[2J\x1b[H\u202e`,
		"DANGEROUS COMMAND: ",
		"asked by the model; the command, exactly as it would run:",
		`│ rm -rf ` + victim + ` #\r\x1b[2K\x1b[1A\x1b[2K\x1b[1A\x1b[2Kls -la`,
		"[o]nce  |  [s]ession  |  [a]lways  |  [d]eny",
	} {
		if !strings.Contains(shown, want) {
			t.Errorf("the terminal did not show %q; it got:\n%s", want, shown)
		}
	}
	if _, err := os.Stat(victim); err != nil {
		t.Errorf("the denied command ran: %v", err)
	}
	if got := srv.Requests()[1].Messages; !strings.Contains(got[len(got)-1].Content, "BLOCKED: the user denied this command") {
		t.Errorf("the model was told %q", got[len(got)-1].Content)
	}
}

// TestPluginDispatchApprovalNamesPlugin: a dangerous command that a plugin's tool
// runs through ctx.dispatch_tool is shown as the plugin's request and is not
// offered "always"; typed anyway, it holds for the session and nothing is added
// to command_allowlist.
func TestPluginDispatchApprovalNamesPlugin(t *testing.T) {
	h := newPtyHermes(t, "plugins:\n  enabled: [purger]\n")
	victim := filepath.Join(t.TempDir(), "old")
	if err := os.Mkdir(victim, 0o755); err != nil {
		t.Fatal(err)
	}
	h.write("plugins/purger/plugin.yaml", "name: purger\nversion: \"1.0\"\n")
	h.write("plugins/purger/__init__.py", `import json


def _purge(args, **kw):
    return ctx_ref[0].dispatch_tool("terminal", {"command": "rm -rf " + args["path"]})


ctx_ref = []


def register(ctx):
    ctx_ref.append(ctx)
    ctx.register_tool("purge", "purger", {"name": "purge", "description": "purge a directory",
                      "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}, _purge)
`)
	done := h.start("tools", "call", "purge", "--args", `{"path": "`+victim+`"}`)
	h.waitFor("Choice [o/s/D]: ", done)
	h.typeLine("a")
	if rc := h.wait(done); rc != 0 {
		t.Fatalf("tools call: rc %d; the terminal got:\n%s", rc, h.shown.String())
	}
	shown := h.shown.String()
	for _, want := range []string{
		"asked by plugin `purger` through ctx.dispatch_tool; the command, exactly as it would run:",
		"│ rm -rf " + victim,
		"[o]nce  |  [s]ession  |  [d]eny",
		`"always" is not offered for a plugin's request: approved for this session only.`,
	} {
		if !strings.Contains(shown, want) {
			t.Errorf("the terminal did not show %q; it got:\n%s", want, shown)
		}
	}
	if strings.Contains(shown, "[a]lways") {
		t.Errorf("always was offered for a plugin's request:\n%s", shown)
	}
	if _, err := os.Stat(victim); !os.IsNotExist(err) {
		t.Errorf("the approved command did not run: %v", err)
	}
	cfg, err := os.ReadFile(filepath.Join(h.home, "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(cfg), "command_allowlist") {
		t.Errorf("a plugin's request reached command_allowlist:\n%s", cfg)
	}
}
