package chatui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/hermes-go/hermes/internal/agent"
	"github.com/hermes-go/hermes/internal/approval"
	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/internal/session"
	"github.com/hermes-go/hermes/internal/tools"
)

func newChat() *stubChat {
	return &stubChat{model: "fake-model", id: "s1", title: "my work", ctxLen: 128000}
}

// A streamed answer goes to the scrollback as its lines become final; the
// status line shows the usage the chat recorded for the turn.
func TestStreamedAnswerAndStatus(t *testing.T) {
	c := newChat()
	var h *harness
	c.turn = func(ctx context.Context, input string) (*agent.Turn, error) {
		for _, d := range []string{"Hello ", "**world**.\nSecond", " line\x1b[2J."} {
			h.out.Text(d)
		}
		c.mu.Lock()
		c.usage = append(c.usage, session.TurnUsage{PromptTokens: 1234, CompletionTokens: 56, TotalTokens: 1290})
		c.mu.Unlock()
		return &agent.Turn{Final: "Hello **world**.\nSecond line.", Streamed: true}, nil
	}
	h = newHarness(t, c)
	h.typ("hi there")
	h.key("enter")
	h.until("finished the turn", func() bool { return h.idle() && strings.Contains(h.printed(), "Second") })
	if got, want := c.inputs, []string{"hi there"}; len(got) != 1 || got[0] != want[0] {
		t.Fatalf("the chat got %q, want %q", got, want)
	}
	for _, want := range []string{"› hi there", "Hello **world**.", `Second line\x1b[2J.`} {
		if !strings.Contains(h.printed(), want) {
			t.Errorf("the transcript lacks %q:\n%s", want, h.printed())
		}
	}
	if strings.Contains(h.printed(), "\x1b[2J") {
		t.Errorf("the model's escape reached the terminal: %q", h.printed())
	}
	golden(t, "after-turn", h.view())
	if !strings.Contains(h.view(), "last 1,234↑ 56↓") || !strings.Contains(h.view(), "ctx 1% of 128,000") {
		t.Errorf("status line lacks the turn's usage:\n%s", h.view())
	}
}

// Ctrl-C while the answer streams interrupts the turn; what was streamed stays.
func TestCtrlCInterruptsStream(t *testing.T) {
	c := newChat()
	var h *harness
	started := make(chan struct{})
	c.turn = func(ctx context.Context, input string) (*agent.Turn, error) {
		h.out.Text("partial answer\nstill going")
		close(started)
		<-ctx.Done()
		return &agent.Turn{Final: "partial answer\nstill going", Streamed: true}, agent.ErrInterrupted
	}
	h = newHarness(t, c)
	h.typ("long one")
	h.key("enter")
	h.until("streamed", func() bool { return strings.Contains(h.view(), "still going") })
	<-started
	h.key("ctrl+c")
	h.until("stopped", h.shows("(turn stopped; what was said so far is kept)"))
	for _, want := range []string{"partial answer", "still going"} {
		if !strings.Contains(h.printed(), want) {
			t.Errorf("the partial answer lost %q:\n%s", want, h.printed())
		}
	}
	if h.quit {
		t.Fatal("Ctrl-C during a turn quit the chat")
	}
}

// Ctrl-C on an empty idle editor twice leaves; once, it only says how.
// Ctrl-C with text clears it. Ctrl-D on an empty editor leaves.
func TestQuitKeys(t *testing.T) {
	h := newHarness(t, newChat())
	h.typ("draft")
	h.key("ctrl+c")
	if v := h.m.ed.Value(); v != "" {
		t.Fatalf("Ctrl-C left %q in the editor", v)
	}
	h.key("ctrl+c")
	if h.quit {
		t.Fatal("one Ctrl-C on an empty editor quit")
	}
	h.until("hint", h.shows("Ctrl-C again or Ctrl-D"))
	h.key("ctrl+c")
	h.until("quit", func() bool { return h.quit })

	h2 := newHarness(t, newChat())
	h2.key("ctrl+d")
	h2.until("quit", func() bool { return h2.quit })
}

// The approval modal: arrows move the pick, Enter answers; Esc is deny; a
// shortcut letter answers at once; a request whose ctx ends goes away.
func TestApprovalModal(t *testing.T) {
	for _, tt := range []struct {
		name   string
		keys   []string
		origin tools.Origin
		want   approval.Choice
	}{
		{"arrow and enter", []string{"right", "enter"}, tools.Origin{}, approval.ChoiceSession},
		{"esc denies", []string{"esc"}, tools.Origin{}, approval.ChoiceDeny},
		{"letter", []string{"a"}, tools.Origin{}, approval.ChoiceAlways},
		{"plugin has no always", []string{"left", "enter"}, tools.Origin{Kind: tools.FromPlugin, Plugin: "p"}, approval.ChoiceDeny},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newChat()
			var h *harness
			got := make(chan approval.Choice, 1)
			c.turn = func(ctx context.Context, input string) (*agent.Turn, error) {
				ch, _ := h.pr.Prompt(ctx, approval.Prompt{Command: "rm -rf /tmp/x\x1b[2K", Description: "recursive delete", Origin: tt.origin})
				got <- ch
				return &agent.Turn{}, nil
			}
			h = newHarness(t, c)
			h.typ("go")
			h.key("enter")
			h.until("modal", func() bool { return h.m.appr != nil })
			if tt.name == "arrow and enter" {
				golden(t, "approval", h.view())
			}
			h.key(tt.keys...)
			h.until("answered", h.idle)
			if c := <-got; c != tt.want {
				t.Errorf("answer %q, want %q", c, tt.want)
			}
		})
	}
	t.Run("timeout", func(t *testing.T) {
		c := newChat()
		var h *harness
		c.turn = func(ctx context.Context, input string) (*agent.Turn, error) {
			pctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
			defer cancel()
			_, err := h.pr.Prompt(pctx, approval.Prompt{Command: "ls", Description: "d"})
			return &agent.Turn{Final: err.Error()}, nil
		}
		h = newHarness(t, c)
		h.typ("go")
		h.key("enter")
		h.until("timed out", h.shows("no answer in time"))
		h.until("idle", h.idle)
		if h.m.appr != nil {
			t.Fatal("the modal stayed after its request timed out")
		}
	})
}

// Slash commands run through the chat's command code; /retry sends the
// message again; /quit leaves.
func TestSlashCommands(t *testing.T) {
	c := newChat()
	c.turn = func(ctx context.Context, input string) (*agent.Turn, error) {
		return &agent.Turn{Final: "answer to " + input}, nil
	}
	h := newHarness(t, c)
	h.typ("/usage")
	h.key("enter")
	h.until("ran", h.shows("ran /usage"))
	h.typ("/retry")
	h.key("enter")
	h.until("retried", h.shows("answer to hello"))
	h.typ("/quit")
	h.key("enter")
	h.until("quit", func() bool { return h.quit })
}

// Tab completion, through the editor's keys: a built-in command (the menu
// when two match), a plugin command with its hint, @file: paths.
func TestCompletion(t *testing.T) {
	h := newHarness(t, newChat())
	h.typ("/u")
	h.key("tab")
	if v := h.view(); !strings.Contains(v, "/usage") || !strings.Contains(v, "/undo") || !strings.Contains(v, "tokens") {
		t.Errorf("menu of /u:\n%s", v)
	}
	h.key("ctrl+u", "esc")
	h.m.ed.Reset()
	h.typ("/sh")
	h.key("tab")
	if got := h.m.ed.Value(); got != "/shout " {
		t.Errorf("/sh completed to %q", got)
	}
	h.m.ed.Reset()
	dir := h.m.o.Cwd
	if err := os.MkdirAll(filepath.Join(dir, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "src", "main.go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	h.typ("look at @file:sr")
	h.key("tab")
	if got := h.m.ed.Value(); got != "look at @file:src/" {
		t.Errorf("@file:sr completed to %q", got)
	}
	h.typ("m")
	h.key("tab")
	if got := h.m.ed.Value(); got != "look at @file:src/main.go " {
		t.Errorf("@file:src/m completed to %q", got)
	}
}

// An injected message interrupts the running turn and runs next.
func TestInjectInterrupts(t *testing.T) {
	c := newChat()
	c.turn = func(ctx context.Context, input string) (*agent.Turn, error) {
		if input == "first" {
			<-ctx.Done()
			return &agent.Turn{}, agent.ErrInterrupted
		}
		return &agent.Turn{Final: "did " + input}, nil
	}
	h := newHarness(t, c)
	h.typ("first")
	h.key("enter")
	h.until("busy", func() bool { return h.m.busy })
	h.handle(injectMsg{text: "from plugin"})
	h.until("ran the injected", h.shows("did from plugin"))
}

// /resume opens the picker; Enter resumes the pick and shows its recap.
func TestResumePicker(t *testing.T) {
	c := newChat()
	c.sessions = []session.Session{
		{ID: "s1", Title: "my work", MessageCount: 4, UpdatedAt: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)},
		{ID: "s0", Preview: "older one", MessageCount: 2, UpdatedAt: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)},
	}
	c.history = []llm.Message{{Role: "user", Content: "what is **up**"}, {Role: "assistant", Content: "all good, sk-secret"}}
	h := newHarness(t, c)
	h.typ("/resume")
	h.key("enter")
	h.until("picker", func() bool { return h.m.picker != nil })
	if v := h.view(); !strings.Contains(v, "older one") || !strings.Contains(v, "my work") {
		t.Errorf("picker:\n%s", v)
	}
	h.key("down", "enter")
	h.until("recap", h.shows("Resumed session s0"))
	if len(c.resumed) != 1 || c.resumed[0] != "s0" {
		t.Errorf("resumed %q, want s0", c.resumed)
	}
	if p := h.printed(); !strings.Contains(p, "all good, sk-***") || strings.Contains(p, "sk-secret") {
		t.Errorf("recap (redacted):\n%s", p)
	}
}

// A paste arrives as one message with its newlines.
func TestPasteIsOneMessage(t *testing.T) {
	c := newChat()
	c.turn = func(ctx context.Context, input string) (*agent.Turn, error) { return &agent.Turn{Final: "ok"}, nil }
	h := newHarness(t, c)
	h.handle(tea.PasteMsg{Content: "one\ntwo\nthree"})
	h.key("enter")
	h.until("sent", func() bool { return h.idle() && len(c.inputs) == 1 })
	if c.inputs[0] != "one\ntwo\nthree" {
		t.Errorf("sent %q", c.inputs[0])
	}
}

func TestFitParts(t *testing.T) {
	for _, tt := range []struct {
		parts []string
		w     int
		want  string
	}{
		{[]string{"a", "b"}, 10, "a · b"},
		{[]string{"aaaa", "bbbb", "cccc"}, 11, "aaaa · bbbb\ncccc"},
		{[]string{"aaaa", "bbbb", "cccc", "ddddd"}, 11, "aaaa · bbbb\ncccc · ddd…"},
	} {
		if got := fitParts(tt.parts, tt.w, 2); got != tt.want {
			t.Errorf("fitParts(%q, %d) = %q, want %q", tt.parts, tt.w, got, tt.want)
		}
	}
}

// Lines written to stderr while the screen runs join the transcript whole,
// in order, escaped; a partial line waits for its end.
func TestStderrLines(t *testing.T) {
	w := newStderrLines()
	_, _ = w.Write([]byte("warning: one\n[plug] two"))
	_, _ = w.Write([]byte(" halves\x1b]0;x\x07\nthree"))
	got := w.take()
	want := []string{"warning: one", `[plug] two halves\x1b]0;x\x07`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("lines %q, want %q", got, want)
	}
	h := newHarness(t, newChat())
	h.handle(stderrMsg{got})
	if !strings.Contains(h.printed(), "[plug] two halves") {
		t.Errorf("not in the transcript:\n%s", h.printed())
	}
}

// The wait for the model and its retries show in the status line.
func TestWaitInStatus(t *testing.T) {
	c := newChat()
	var h *harness
	release := make(chan struct{})
	c.turn = func(ctx context.Context, input string) (*agent.Turn, error) {
		update, done := h.out.Waiting("waiting for fake-model")
		update("model did not answer in 1 s, retry 1/3")
		<-release
		done()
		h.out.Text("fine\n")
		return &agent.Turn{Final: "fine", Streamed: true}, nil
	}
	h = newHarness(t, c)
	h.typ("x")
	h.key("enter")
	h.until("retry shown", func() bool { return strings.Contains(h.view(), "retry 1/3") })
	if v := h.view(); !strings.Contains(v, "waiting for fake-model (custom)") {
		t.Errorf("status:\n%s", v)
	}
	close(release)
	h.until("done", h.idle)
	if v := h.view(); strings.Contains(v, "retry 1/3") || strings.Contains(v, "waiting") {
		t.Errorf("the wait stayed in the status line:\n%s", v)
	}
}

// A tool call shows as a running row with a spinner, then its result's
// summary; Ctrl-O prints the last result whole.
func TestToolRowsAndExpand(t *testing.T) {
	c := newChat()
	var h *harness
	release := make(chan struct{})
	c.turn = func(ctx context.Context, input string) (*agent.Turn, error) {
		h.out.Text("Let me look.")
		h.out.send(toolStartMsg{id: "c1", name: "read_file", args: `{"path":"notes.txt"}`})
		<-release
		h.out.send(toolEndMsg{id: "c1", name: "read_file", result: "line one\nline two\nline three", dur: 1500 * time.Millisecond})
		h.out.Text("Done.")
		return &agent.Turn{Final: "Let me look.Done.", Streamed: true}, nil
	}
	h = newHarness(t, c)
	h.typ("read it")
	h.key("enter")
	h.until("running row", func() bool { return strings.Contains(h.view(), "read_file") })
	if !strings.Contains(h.printed(), "Let me look.") {
		t.Errorf("the text before the tool was not finalised:\n%s", h.printed())
	}
	close(release)
	h.until("done", func() bool { return h.idle() && strings.Contains(h.printed(), "Done.") })
	if strings.Contains(h.view(), "read_file") {
		t.Errorf("the ended tool is still a running row:\n%s", h.view())
	}
	if strings.Contains(h.printed(), "line three") {
		t.Errorf("the summary showed the whole result:\n%s", h.printed())
	}
	h.key("ctrl+o")
	if !strings.Contains(h.printed(), "line three") {
		t.Errorf("Ctrl-O did not show the whole result:\n%s", h.printed())
	}
}
