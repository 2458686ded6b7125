package chatui

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/hermes-go/hermes/internal/agent"
)

// echoChat answers every message with "ok" and records what it got.
func echoChat() *stubChat {
	c := newChat()
	c.turn = func(context.Context, string) (*agent.Turn, error) { return &agent.Turn{Final: "ok"}, nil }
	return c
}

// send presses Enter and waits for the chat to have had n messages.
func (h *harness) send(n int) {
	h.t.Helper()
	h.key("enter")
	h.until("sent", func() bool {
		h.chat.mu.Lock()
		defer h.chat.mu.Unlock()
		return h.idle() && len(h.chat.inputs) == n
	})
}

// Typing goes through the editor's keys: Ctrl-A/E move, Ctrl-W drops a word,
// Left inserts in the middle; what is sent is the edited line.
func TestTypingEdits(t *testing.T) {
	c := echoChat()
	h := newHarness(t, c)
	h.typ("world")
	h.key("ctrl+a")
	h.typ("hello ")
	h.key("ctrl+e")
	h.typ(" typo")
	h.key("ctrl+w", "backspace", "left")
	h.typ("!")
	h.key("ctrl+e")
	h.typ("?")
	if got := h.m.ed.Value(); got != "hello worl!d?" {
		t.Fatalf("editor holds %q", got)
	}
	h.send(1)
	if c.inputs[0] != "hello worl!d?" {
		t.Errorf("sent %q", c.inputs[0])
	}
	if h.m.ed.Value() != "" {
		t.Errorf("the editor kept %q after sending", h.m.ed.Value())
	}
}

// What was sent in one run comes back in the next (the same history file):
// Up walks it newest first, Ctrl-R finds an older entry by a word of it.
func TestHistoryAcrossRuns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chat_history")
	first := newHarnessWith(t, echoChat(), harnessOpts{history: path})
	for i, s := range []string{"how do I list files", "and hidden ones\ntoo", "thanks"} {
		first.handle(tea.PasteMsg{Content: s})
		first.send(i + 1)
	}

	c := echoChat()
	h := newHarnessWith(t, c, harnessOpts{history: path})
	h.key("up")
	if got := h.m.ed.Value(); got != "thanks" {
		t.Errorf("Up shows %q, want the last sent", got)
	}
	h.key("up")
	if got := h.m.ed.Value(); got != "and hidden ones\ntoo" {
		t.Errorf("Up again shows %q, want the two-line entry whole", got)
	}
	h.key("down", "down", "down") // to the entry's second line, to the newer entry, to the draft
	if got := h.m.ed.Value(); got != "" {
		t.Errorf("Down past the newest shows %q, want the empty draft", got)
	}
	h.key("ctrl+r")
	h.typ("list")
	if got := h.m.ed.Value(); got != "how do I list files" {
		t.Errorf("Ctrl-R list shows %q", got)
	}
	if v := h.view(); !strings.Contains(v, "list") {
		t.Errorf("the search's query is not shown:\n%s", v)
	}
	h.key("enter") // ends the search on its match
	h.send(1)
	if c.inputs[0] != "how do I list files" {
		t.Errorf("sent %q after Ctrl-R", c.inputs[0])
	}
}

// A paste of 10,000 characters is one message, whole.
func TestPasteLongIsOneMessage(t *testing.T) {
	c := echoChat()
	h := newHarness(t, c)
	long := strings.Repeat("0123456789", 1000)
	h.handle(tea.PasteMsg{Content: long})
	h.send(1)
	if c.inputs[0] != long {
		t.Errorf("sent %d characters, want the 10,000 pasted", len(c.inputs[0]))
	}
}

const mdAnswer = "# Plan\n\nUse **bold** words and `code`:\n\n- first item\n- second item that is long enough to wrap at forty columns\n\n```go\nfunc main() {\n\tprintln(\"hi\")\n}\n```\n\nDone."

// streamAnswer is a turn that streams mdAnswer in deltas of 7 bytes.
func streamAnswer(h **harness) func(context.Context, string) (*agent.Turn, error) {
	return func(context.Context, string) (*agent.Turn, error) {
		for s := mdAnswer; s != ""; {
			n := min(7, len(s))
			(*h).out.Text(s[:n])
			s = s[n:]
		}
		return &agent.Turn{Final: mdAnswer, Streamed: true}, nil
	}
}

// The streamed answer is rendered as markdown: no raw markers, the list and
// the code block laid out, the code highlighted with colour on.
func TestMarkdownAndCode(t *testing.T) {
	c := newChat()
	var h *harness
	c.turn = streamAnswer(&h)
	h = newHarnessWith(t, c, harnessOpts{color: true, width: 60, height: 20})
	h.typ("plan")
	h.send(1)
	h.until("rendered", h.shows("Done."))
	raw := h.printed()
	plain := ansi.Strip(raw)
	for _, bad := range []string{"**bold**", "```", "# Plan"} {
		if strings.Contains(plain, bad) {
			t.Errorf("raw markdown %q on the screen:\n%s", bad, plain)
		}
	}
	var codeLine string
	for _, l := range strings.Split(raw, "\n") {
		if strings.Contains(ansi.Strip(l), "func main()") {
			codeLine = l
		}
	}
	if codeLine == "" || !strings.Contains(codeLine, "\x1b[") {
		t.Errorf("the code line is not highlighted: %q", codeLine)
	}
	golden(t, "markdown", answerPart(plain))
}

// answerPart is the transcript from the user's message on (the banner has
// the session's wording, which other tests check).
func answerPart(s string) string {
	if i := strings.Index(s, "› "); i >= 0 {
		s = s[i:]
	}
	return s + "\n"
}

// At 40 columns nothing drawn or printed is wider than 40 cells, the editor
// included while it holds a long line.
func TestNarrow40(t *testing.T) {
	c := newChat()
	var h *harness
	c.turn = streamAnswer(&h)
	h = newHarnessWith(t, c, harnessOpts{width: 80, height: 20})
	h.handle(tea.WindowSizeMsg{Width: 40, Height: 15})
	h.typ("plan")
	h.send(1)
	h.until("rendered", h.shows("Done."))
	h.typ(strings.Repeat("a long draft ", 8))
	for name, s := range map[string]string{"printed": h.printed(), "view": h.view()} {
		for _, l := range strings.Split(s, "\n") {
			if w := ansi.StringWidth(l); w > 40 {
				t.Errorf("%s: a line is %d cells at 40: %q", name, w, l)
			}
		}
	}
	golden(t, "narrow", answerPart(h.printed())+"---\n"+h.view())
}

// A command's output longer than the screen is broken at spaces, never in
// the middle of a word.
func TestCommandOutputWrapsAtWords(t *testing.T) {
	h := newHarnessWith(t, newChat(), harnessOpts{width: 40, height: 15})
	words := strings.Fields(strings.Repeat("cost unknown (set model.pricing.fake-model in config.yaml) ", 3))
	h.typ("/usage " + strings.Join(words, " "))
	h.key("enter")
	h.until("the output printed", h.shows("ran /usage"))
	h.until("idle", h.idle)
	printed := h.printed()
	for _, l := range strings.Split(printed, "\n") {
		if w := ansi.StringWidth(l); w > 40 {
			t.Errorf("a line is %d cells at 40: %q", w, l)
		}
	}
	// Rejoined (a break after a hyphen joins without a space), the output is
	// what the command said: no word cut elsewhere, none lost.
	out := printed[strings.LastIndex(printed, "ran /usage"):]
	out = strings.Join(strings.Fields(strings.ReplaceAll(out, "-\n", "-")), " ")
	if want := "ran /usage " + strings.Join(words, " "); out != want {
		t.Fatalf("words cut or lost:\n got %q\nwant %q", out, want)
	}
	// The echo of what was typed wraps the same way, under its prompt mark.
	if !strings.Contains(printed, "› /usage cost unknown (set") {
		t.Errorf("the echo's first line:\n%s", printed)
	}
}

// Reasoning shows dim while it streams (its last lines), and folds to its
// first lines in the transcript; Ctrl-O prints it whole.
func TestReasoningDimAndFolded(t *testing.T) {
	c := newChat()
	var h *harness
	goOn := make(chan struct{})
	var steps []string
	for i := 1; i <= 8; i++ {
		steps = append(steps, fmt.Sprintf("step %d of the thinking", i))
	}
	c.turn = func(context.Context, string) (*agent.Turn, error) {
		for _, s := range steps {
			h.out.Reasoning(s + "\n")
		}
		<-goOn
		h.out.Text("The answer.")
		return &agent.Turn{Final: "The answer.", Streamed: true}, nil
	}
	h = newHarnessWith(t, c, harnessOpts{color: true})
	h.typ("think")
	h.key("enter")
	h.until("thinking shown", func() bool { return strings.Contains(h.view(), "step 8") })
	v := h.m.View().Content
	if !strings.Contains(v, "thinking… (8 lines)") || strings.Contains(ansi.Strip(v), "step 5 ") {
		t.Errorf("streaming thinking is not folded to its last lines:\n%s", ansi.Strip(v))
	}
	if !strings.Contains(v, "\x1b[2;3m  step 8") {
		t.Errorf("streaming thinking is not dim: %q", v)
	}
	close(goOn)
	h.until("answered", func() bool { return h.idle() && strings.Contains(ansi.Strip(h.printed()), "The answer.") })
	p := ansi.Strip(h.printed())
	if !strings.Contains(p, "step 3 of") || strings.Contains(p, "step 4 of") || !strings.Contains(p, "… 5 more lines of reasoning") {
		t.Errorf("the transcript's thinking is not folded:\n%s", p)
	}
	if !strings.Contains(h.printed(), "\x1b[2;3m  step 1") {
		t.Errorf("the transcript's thinking is not dim: %q", h.printed())
	}
	if strings.Index(p, "step 1") > strings.Index(p, "The answer.") {
		t.Errorf("the thinking is not before the answer:\n%s", p)
	}
	h.key("ctrl+o")
	h.until("expanded", h.shows("step 8 of the thinking"))
}

// A resize while the answer streams re-wraps what the screen still draws
// (the answer's unfinished paragraph, the editor, the status line).
func TestResizeMidStream(t *testing.T) {
	c := newChat()
	var h *harness
	goOn := make(chan struct{})
	c.turn = func(context.Context, string) (*agent.Turn, error) {
		h.out.Text(strings.Repeat("streaming words ", 12))
		<-goOn
		h.out.Text("end.")
		return &agent.Turn{Final: "", Streamed: true}, nil
	}
	h = newHarnessWith(t, c, harnessOpts{width: 100, height: 30})
	h.typ("go")
	h.key("enter")
	h.until("streaming", func() bool { return strings.Contains(h.view(), "streaming words") })
	wide := h.view()
	h.handle(tea.WindowSizeMsg{Width: 40, Height: 20})
	for _, l := range strings.Split(h.view(), "\n") {
		if w := ansi.StringWidth(l); w > 40 {
			t.Errorf("after the resize a drawn line is %d cells: %q\nbefore:\n%s", w, l, wide)
		}
	}
	close(goOn)
	h.until("done", func() bool { return h.idle() && strings.Contains(h.printed(), "end.") })
	for _, l := range strings.Split(h.printed(), "\n") {
		if w := ansi.StringWidth(l); w > 40 && strings.Contains(l, "streaming") {
			t.Errorf("the answer printed after the resize is %d cells: %q", w, l)
		}
	}
}
