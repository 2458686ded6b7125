package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/internal/llm/llmtest"
)

// The full-screen `hermes chat`, run by the real binary in a real terminal
// (tmux) against the fake model.

// chatScreenHome is a HERMES_HOME whose model is srv, with no plugins.
func chatScreenHome(t *testing.T, srv *llmtest.Server) (home string) {
	t.Helper()
	home = t.TempDir()
	hh := filepath.Join(home, ".hermes")
	if err := os.MkdirAll(hh, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := "model:\n  default: fake-model\n  base_url: " + srv.URL + "\n  context_length: 128000\nplugins:\n  enabled: []\n  disabled: [datetime]\n"
	if err := os.WriteFile(filepath.Join(hh, "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}

func startChatScreen(t *testing.T, home string, w, h int, args ...string) *inTmux {
	t.Helper()
	return startChatScreenAt(t, "", home, w, h, args...)
}

// startChatScreenAt runs the chat in dir (@file: completes from there).
func startChatScreenAt(t *testing.T, dir, home string, w, h int, args ...string) *inTmux {
	t.Helper()
	s := startInTmuxAt(t, dir, termEnv(home, "TERM=xterm-256color"), w, h, append([]string{"chat"}, args...)...)
	s.waitScreen("fake-model (custom)")
	return s
}

var sessionID = regexp.MustCompile(`\d{8}_\d{6}_[0-9a-f]{6}`)

// stable is a screen with the session ids (time and random) replaced.
func stable(screen string) string { return sessionID.ReplaceAllString(screen, "<session>") }

// waitScreenMatch waits until the screen matches re.
func (s *inTmux) waitScreenMatch(re *regexp.Regexp) string {
	s.t.Helper()
	deadline := time.Now().Add(guard)
	for {
		got := s.screen()
		if re.MatchString(got) {
			return got
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the screen never matched %s; it shows:\n%s", re, got)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// settled is the screen once it stays the same for 40 ms (almost five
// frames), starting from got. A line printed to the scrollback is written at
// once (Bubble Tea's Println) while the frame that drops it from the
// streaming tail waits for the renderer's next tick: for up to a frame the
// terminal shows the line twice (or, the other way round, not at all), and
// a capture in that moment is not the screen the user is left with.
func (s *inTmux) settled(got string) string {
	s.t.Helper()
	deadline := time.Now().Add(guard)
	for {
		time.Sleep(40 * time.Millisecond)
		now := s.screen()
		if now == got {
			return got
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the screen never settled; it shows:\n%s", now)
		}
		got = now
	}
}

// typeText types s literally (no key names).
func (s *inTmux) typeText(text string) {
	s.t.Helper()
	s.tmux("send-keys", "-l", text)
}

// paste pastes text as a terminal does (bracketed, as the program asked).
func (s *inTmux) paste(text string) {
	s.t.Helper()
	s.tmux("set-buffer", "--", text)
	s.tmux("paste-buffer", "-p", "-d")
}

// lastUser is the last user message the fake model got.
func lastUser(t *testing.T, srv *llmtest.Server) string {
	t.Helper()
	reqs := srv.Requests()
	if len(reqs) == 0 {
		t.Fatal("the model got no request")
	}
	msgs := reqs[len(reqs)-1].Messages
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			return msgs[i].Content
		}
	}
	t.Fatal("the last request has no user message")
	return ""
}

// Type a message, get the streamed answer; the status line shows the usage
// the model reported; /usage agrees; Ctrl-D leaves with 0.
func TestChatScreenTurn(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Reply{Content: "Hello! This is the answer.\n\nA second paragraph.",
		Usage: &llm.Usage{PromptTokens: 1234, CompletionTokens: 56, TotalTokens: 1290}})
	s := startChatScreen(t, chatScreenHome(t, srv), 80, 24)
	goldenScreen(t, "chat-ready", stable(s.settled(s.screen())))
	s.typeText("hello there")
	s.keys("Enter")
	s.waitScreen("A second paragraph.")
	got := s.waitScreen("last 1,234↑ 56↓")
	goldenScreen(t, "chat-answered", stable(s.settled(got)))
	if u := lastUser(t, srv); u != "hello there" {
		t.Errorf("the model got %q", u)
	}
	s.typeText("/usage")
	s.keys("Enter")
	s.waitScreen("Last turn:   1,234 in · 56 out · 1,290 tokens")
	s.keys("C-d")
	s.waitScreen("[hermes exit 0]")
}

// A paste of 10,000 characters and one of three lines each reach the model
// as one message, exactly.
func TestChatScreenPaste(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Text("got the long one"), llmtest.Text("got the three lines"))
	s := startChatScreen(t, chatScreenHome(t, srv), 80, 24)
	long := strings.Repeat("abcdefghij", 1000)
	s.paste(long)
	s.keys("Enter")
	s.waitScreen("got the long one")
	if u := lastUser(t, srv); u != long {
		t.Errorf("the model got %d characters, want the 10,000 pasted", len(u))
	}
	s.paste("one\ntwo\nthree")
	s.keys("Enter")
	s.waitScreen("got the three lines")
	if u := lastUser(t, srv); u != "one\ntwo\nthree" {
		t.Errorf("the model got %q, want the three lines as one message", u)
	}
}

// What was typed comes back with Up in the next run.
func TestChatScreenHistoryAfterRestart(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Text("noted"))
	home := chatScreenHome(t, srv)
	s := startChatScreen(t, home, 80, 24)
	s.typeText("remember this line")
	s.keys("Enter")
	s.waitScreen("noted")
	s.keys("C-d")
	s.waitScreen("[hermes exit 0]")

	srv.Enqueue(llmtest.Text("noted again"))
	again := startChatScreen(t, home, 80, 24)
	again.keys("Up")
	again.waitScreen("› remember this line")
	again.keys("Enter")
	again.waitScreen("noted again")

	// Ctrl-R in a third run finds the entry by a word of it among two.
	srv.Enqueue(llmtest.Text("found it"))
	third := startChatScreen(t, home, 80, 24)
	third.typeText("/usage")
	third.keys("Enter")
	third.waitScreen("No usage yet")
	third.keys("C-r")
	third.typeText("memb")
	third.waitScreen("› remember this line")
	third.keys("Enter", "Enter")
	third.waitScreen("found it")
	if u := lastUser(t, srv); u != "remember this line" {
		t.Errorf("Ctrl-R sent %q", u)
	}
	b, err := os.ReadFile(filepath.Join(home, ".hermes", "chat_history"))
	// The second run's resend repeated the newest entry (not recorded again);
	// the third's came after /usage.
	if want := "\"remember this line\"\n\"/usage\"\n\"remember this line\"\n"; err != nil || string(b) != want {
		t.Errorf("$HERMES_HOME/chat_history holds %q (%v), want %q", b, err, want)
	}
}

// Tab completes a slash command and an @file: path; the chat redraws at 40
// columns.
func TestChatScreenCompletionAndResize(t *testing.T) {
	srv := llmtest.NewServer(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startChatScreenAt(t, dir, chatScreenHome(t, srv), 80, 24)
	s.typeText("/usa")
	s.keys("Tab")
	s.waitScreen("› /usage")
	s.keys("C-c") // clears the editor
	s.typeText("read @file:go.")
	s.keys("Tab")
	s.waitScreen("› read @file:go.mod")
	s.keys("C-c")
	s.tmux("resize-window", "-x", "40", "-y", "15")
	// Redrawn at 40: the status line's parts wrap between themselves.
	got := s.waitScreenMatch(regexp.MustCompile(`(?m)^fake-model \(custom\)\n^session \d{8}_\d{6}_[0-9a-f]{6}$`))
	got = s.settled(got)
	goldenScreen(t, "chat-narrow", stable(got))
	for _, l := range strings.Split(got, "\n") {
		if w := len([]rune(l)); w > 40 {
			t.Errorf("a line is %d columns wide at 40: %q", w, l)
		}
	}
}

// The model asks for a dangerous command: the modal shows it, Right+Enter
// approves it for the session, the command runs and the model goes on.
func TestChatScreenApproval(t *testing.T) {
	srv := llmtest.NewServer(t)
	marker := filepath.Join(t.TempDir(), "ran")
	srv.Enqueue(
		llmtest.ToolCalls(llmtest.Call("terminal", map[string]any{"command": "rm -rf " + marker + ".d; touch " + marker})),
		llmtest.Text("the command ran"),
	)
	s := startChatScreen(t, chatScreenHome(t, srv), 100, 30)
	s.typeText("clean up")
	s.keys("Enter")
	got := s.waitScreen("always")
	if !strings.Contains(got, "rm -rf "+marker) {
		t.Fatalf("the modal does not show the command:\n%s", got)
	}
	s.keys("Right", "Enter")
	s.waitScreen("the command ran")
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the approved command did not run: %v", err)
	}
}

// Ctrl-C while the answer streams stops the turn; the part streamed stays on
// the screen and in the session (the next request carries it).
func TestChatScreenInterruptStream(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Reply{Content: "The first part arrives. The rest never does.", ChunkSize: 8, StallAfter: 4},
		llmtest.Text("after the stop"))
	s := startChatScreen(t, chatScreenHome(t, srv), 80, 24)
	s.typeText("tell me")
	s.keys("Enter")
	s.waitScreen("The first part")
	s.keys("C-c")
	s.waitScreen("(turn stopped; what was said so far is kept)")
	s.typeText("go on")
	s.keys("Enter")
	s.waitScreen("after the stop")
	reqs := srv.Requests()
	var kept bool
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role == "assistant" && strings.Contains(m.Content, "The first part") {
			kept = true
		}
	}
	if !kept {
		t.Errorf("the partial answer is not in the session: %+v", reqs[len(reqs)-1].Messages)
	}
	s.keys("C-c")
	s.waitScreen("Ctrl-C again")
	s.keys("C-c")
	s.waitScreen("[hermes exit 0]")
}

// A reply's own escapes (retitle, clear, conceal, bidi) and a command's reach
// the screen escaped, never obeyed.
func TestChatScreenEscapesShownNotObeyed(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(
		llmtest.Reply{Content: "Tidying up.\x1b]0;all good\x07\x1b[2J\x1b[8mhidden\n\nnext", ChunkSize: 3,
			ToolCalls: []llmtest.CallReply{{Name: "terminal", Arguments: map[string]any{"command": "rm -rf /tmp/nothing-here #\r\x1b[2Kls"}}}},
		llmtest.Text("left it"),
	)
	s := startChatScreen(t, chatScreenHome(t, srv), 100, 30)
	s.typeText("go")
	s.keys("Enter")
	got := s.waitScreen("always")
	for _, want := range []string{`Tidying up.\x1b]0;all good\x07\x1b[2J\x1b[8mhidden`, `rm -rf /tmp/nothing-here #\r\x1b[2Kls`} {
		if !strings.Contains(got, want) {
			t.Errorf("the screen lacks %q, escaped:\n%s", want, got)
		}
	}
	if title := s.tmux("display-message", "-p", "#{pane_title}"); strings.Contains(title, "all good") {
		t.Errorf("the reply retitled the window: %q", title)
	}
	s.keys("Escape")
	s.waitScreen("left it")
}

// A write_file call shows the diff of what it will change before it runs,
// then its row; the file is written.
func TestChatScreenToolDiff(t *testing.T) {
	srv := llmtest.NewServer(t)
	path := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(path, []byte("alpha\nbeta\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv.Enqueue(
		llmtest.ToolCalls(llmtest.Call("write_file", map[string]any{"path": path, "content": "alpha\ngamma\n"})),
		llmtest.Text("rewrote it"),
	)
	s := startChatScreen(t, chatScreenHome(t, srv), 100, 30)
	s.typeText("edit the notes")
	s.keys("Enter")
	got := s.waitScreen("rewrote it")
	for _, want := range []string{"-beta", "+gamma", "✓ write_file"} {
		if !strings.Contains(got, want) {
			t.Errorf("the screen lacks %q:\n%s", want, got)
		}
	}
	if b, _ := os.ReadFile(path); string(b) != "alpha\ngamma\n" {
		t.Errorf("the file holds %q", b)
	}
}

// A markdown answer with a code block is rendered on the terminal: the
// markers gone, the list laid out, the code indented; colour on the code.
func TestChatScreenMarkdown(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Reply{Content: "## Steps\n\n1. **Open** the file\n2. Run `make`\n\n```python\ndef main():\n    return 42\n```\n\nThat is all.",
		ChunkSize: 5, Usage: &llm.Usage{PromptTokens: 300, CompletionTokens: 40, TotalTokens: 340}})
	s := startChatScreen(t, chatScreenHome(t, srv), 80, 24)
	s.typeText("how")
	s.keys("Enter")
	got := s.waitScreen("last 300↑ 40↓") // the turn has ended: the final frame
	got = s.settled(got)
	goldenScreen(t, "chat-markdown", stable(got))
	for _, bad := range []string{"**Open**", "```"} {
		if strings.Contains(got, bad) {
			t.Errorf("raw markdown %q on the screen:\n%s", bad, got)
		}
	}
	if colored := s.tmux("capture-pane", "-p", "-e"); !regexp.MustCompile(`\x1b\[[0-9;]*m[^\n]*def`).MatchString(colored) {
		t.Errorf("the code is not coloured:\n%q", colored)
	}
}

// The chat opens while the screen is up: one that cannot open (an unknown
// session to resume) leaves the terminal as it was and says why, with the
// same error and exit code as before the screen existed.
func TestChatScreenOpenFails(t *testing.T) {
	srv := llmtest.NewServer(t)
	s := startInTmuxAt(t, "", termEnv(chatScreenHome(t, srv), "TERM=xterm-256color"), 80, 24, "chat", "--resume", "nosuch")
	got := s.waitScreen("[hermes exit ")
	if !strings.Contains(got, "nosuch") || !strings.Contains(got, "hermes sessions list") {
		t.Errorf("the error is not shown:\n%s", got)
	}
	if !strings.Contains(got, "[hermes exit 1]") {
		t.Errorf("want exit 1:\n%s", got)
	}
	if strings.Contains(got, "starting…") {
		t.Errorf("the screen was left behind:\n%s", got)
	}
}
