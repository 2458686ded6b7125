package chatui

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/hermes-go/hermes/internal/agent"
	"github.com/hermes-go/hermes/internal/chatui/editor"
	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/internal/plugins/registry"
	"github.com/hermes-go/hermes/internal/session"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// stubChat is the Chat the model tests drive: each Run calls the turn
// function the test set, which talks to the screen through out.
type stubChat struct {
	mu       sync.Mutex
	model    string
	id       string
	title    string
	usage    []session.TurnUsage
	history  []llm.Message
	sessions []session.Session
	resumed  []string
	inputs   []string
	turn     func(ctx context.Context, input string) (*agent.Turn, error)
	ctxLen   int
}

func (c *stubChat) Run(ctx context.Context, input string) (*agent.Turn, error) {
	c.mu.Lock()
	c.inputs = append(c.inputs, input)
	turn := c.turn
	c.mu.Unlock()
	return turn(ctx, input)
}
func (c *stubChat) Model() string     { return c.model }
func (c *stubChat) Provider() string  { return "custom" }
func (c *stubChat) SessionID() string { c.mu.Lock(); defer c.mu.Unlock(); return c.id }
func (c *stubChat) Streams() bool     { return true }
func (c *stubChat) Redact(s string) string {
	return strings.ReplaceAll(s, "sk-secret", "sk-***")
}
func (c *stubChat) Usage(context.Context) ([]session.TurnUsage, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]session.TurnUsage(nil), c.usage...), nil
}
func (c *stubChat) ContextLength() int                               { return c.ctxLen }
func (c *stubChat) History() []llm.Message                           { return c.history }
func (c *stubChat) SetTitle(context.Context, string) (string, error) { return c.title, nil }
func (c *stubChat) RecentSessions(context.Context, int) ([]session.Session, error) {
	return c.sessions, nil
}
func (c *stubChat) Resume(_ context.Context, id string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.resumed = append(c.resumed, id)
	c.id = id
	return id, nil
}
func (c *stubChat) Commands() []*registry.Command {
	return []*registry.Command{{Name: "shout", ArgsHint: "TEXT", Description: "say it loud", Plugin: "go-shout"}}
}

// harness runs a Model the way the program does (commands on goroutines,
// their messages back through one loop) without a terminal, and collects
// what the model printed to the scrollback.
type harness struct {
	t     *testing.T
	m     *Model
	chat  *stubChat
	out   *Output
	pr    *Prompter
	msgs  chan tea.Msg
	lines []string
	quit  bool
	cmds  []string // slash command lines run
}

func newHarness(t *testing.T, chat *stubChat) *harness {
	t.Helper()
	return newHarnessWith(t, chat, harnessOpts{})
}

// harnessOpts change the harness' defaults: colour on, a history file of the
// test's (shared by two runs), another size.
type harnessOpts struct {
	color         bool
	history       string
	width, height int
	// opening: the chat comes later on this channel (Screen.Run's way)
	// instead of being attached before Init.
	opening chan openedMsg
}

func newHarnessWith(t *testing.T, chat *stubChat, ho harnessOpts) *harness {
	t.Helper()
	h := &harness{t: t, chat: chat, msgs: make(chan tea.Msg, 1024)}
	o := Options{Color: ho.color, Cwd: t.TempDir(), Commands: []Command{{Name: "usage", Help: "tokens"}, {Name: "undo", Help: "drop"}}}
	if ho.history == "" {
		ho.history = filepath.Join(t.TempDir(), "history")
	}
	if ho.width == 0 {
		ho.width, ho.height = 60, 20
	}
	hist, err := editor.OpenHistory(ho.history, 100)
	if err != nil {
		t.Fatal(err)
	}
	h.m = newModel(o, hist)
	send := func(msg tea.Msg) { h.msgs <- msg }
	h.out, h.pr = &Output{send: send, diff: h.m.diff}, &Prompter{send: send}
	run := func(_ context.Context, line string) CommandResult {
		h.cmds = append(h.cmds, line)
		switch line {
		case "/quit":
			return CommandResult{Quit: true}
		case "/retry":
			return CommandResult{Output: "Retrying: hello", Retry: "hello"}
		}
		return CommandResult{Output: "ran " + line}
	}
	if ho.opening != nil {
		h.m.opening(context.Background(), ho.opening, run)
	} else {
		h.m.attach(context.Background(), chat, run)
	}
	h.handle(h.m.Init())
	h.handle(tea.WindowSizeMsg{Width: ho.width, Height: ho.height})
	return h
}

// handle gives msg (a tea.Cmd runs on its own goroutine) to the model.
func (h *harness) handle(x any) {
	switch v := x.(type) {
	case nil:
	case tea.Cmd:
		if v != nil {
			go func() { h.msgs <- v() }()
		}
	case tea.BatchMsg:
		for _, c := range v {
			h.handle(c)
		}
	case tea.QuitMsg:
		h.quit = true
	case tickMsg, printedMsg:
		// the spinner's frames; printing is collected below
	default:
		cmd := h.m.update(v)
		h.lines = append(h.lines, h.m.pending...)
		h.m.pending = nil
		h.handle(cmd)
	}
}

// until feeds the model the messages its commands send until cond holds.
func (h *harness) until(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.After(10 * time.Second)
	for !cond() {
		select {
		case msg := <-h.msgs:
			h.handle(msg)
		case <-deadline:
			h.t.Fatalf("never %s; printed:\n%s\nview:\n%s", what, h.printed(), h.view())
		}
	}
}

func (h *harness) idle() bool { return !h.m.busy }

func (h *harness) printed() string { return strings.Join(h.lines, "\n") }

func (h *harness) shows(s string) func() bool {
	return func() bool { return strings.Contains(h.printed(), s) }
}

func (h *harness) view() string { return ansi.Strip(h.m.View().Content) }

// key presses a key by its name ("enter", "ctrl+c", "a").
func (h *harness) key(names ...string) {
	for _, n := range names {
		h.handle(keyMsg(n))
	}
}

// typ types text one key at a time.
func (h *harness) typ(s string) {
	for _, r := range s {
		h.handle(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

func keyMsg(name string) tea.KeyPressMsg {
	switch name {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "right":
		return tea.KeyPressMsg{Code: tea.KeyRight}
	case "left":
		return tea.KeyPressMsg{Code: tea.KeyLeft}
	}
	if c, ok := strings.CutPrefix(name, "ctrl+"); ok {
		return tea.KeyPressMsg{Code: rune(c[0]), Mod: tea.ModCtrl}
	}
	r := []rune(name)[0]
	return tea.KeyPressMsg{Code: r, Text: name}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./internal/chatui -update writes it)", err)
	}
	if got != string(want) {
		t.Errorf("%s:\n%s\nwant:\n%s", name, got, want)
	}
}
