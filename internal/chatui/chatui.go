// Package chatui is the full-screen `hermes chat` on a terminal: the
// transcript (user messages, the streamed answer rendered as markdown, tool
// calls), the line editor at the bottom, a status line below it and the
// approval modal. Finished transcript lines are printed once into the
// terminal's scrollback; only the streaming tail, the running tools, the
// editor and the status line are repainted (docs/DESIGN.md).
package chatui

import (
	"context"
	"errors"
	"fmt"
	"io"

	tea "charm.land/bubbletea/v2"

	"github.com/hermes-go/hermes/internal/agent"
	"github.com/hermes-go/hermes/internal/chatui/editor"
	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/internal/plugins/registry"
	"github.com/hermes-go/hermes/internal/session"
)

// Chat is the session the screen drives (app.Chat).
type Chat interface {
	Run(ctx context.Context, input string) (*agent.Turn, error)
	Model() string
	Provider() string
	SessionID() string
	Streams() bool
	Redact(s string) string
	Usage(ctx context.Context) ([]session.TurnUsage, error)
	ContextLength() int
	History() []llm.Message
	SetTitle(ctx context.Context, title string) (string, error)
	RecentSessions(ctx context.Context, n int) ([]session.Session, error)
	Resume(ctx context.Context, id string) (string, error)
	Commands() []*registry.Command
}

// CommandResult is what one slash command did: its output (shown in the
// transcript), whether the chat ends, and a message /retry sends again.
type CommandResult struct {
	Output string
	Quit   bool
	Retry  string
	Err    error
}

// CommandFunc runs a slash command line through the chat's command code.
type CommandFunc func(ctx context.Context, line string) CommandResult

// Command is a slash command offered by Tab completion.
type Command struct{ Name, Args, Help string }

// Options configure the screen.
type Options struct {
	In  io.Reader
	Out io.Writer
	Env []string // TERM and the colour settings
	// Color false: no styling at all (NO_COLOR, TERM=dumb).
	Color bool
	// HistoryPath is where the editor keeps what was typed.
	HistoryPath string
	// Commands are the built-in slash commands (the plugins' are read from Chat).
	Commands []Command
	// Cwd is where @file: completion and the diffs of write_file/patch read
	// from; Home is the user's home (a tool's "~/" path).
	Cwd, Home string
}

// FPS is the screen's frame rate. Bubble Tea writes a frame only on its
// ticker, so the first frame (the ready prompt) and the echo of every key wait
// up to a frame: 8 ms at 120 (its maximum) rather than 17 ms at its default
// 60. A tick with nothing new writes nothing.
const FPS = 120

// Screen is one run of the chat on the terminal. Output, Inject and Prompter
// are handed to the chat before Run; they talk to the running program.
type Screen struct {
	o      Options
	m      *Model
	p      *tea.Program
	stderr *stderrLines
}

// New prepares the screen; the program starts with Run and ends with ctx.
func New(ctx context.Context, o Options) (*Screen, error) {
	var hist *editor.History
	if o.HistoryPath != "" {
		h, err := editor.OpenHistory(o.HistoryPath, 1000)
		if err != nil {
			return nil, fmt.Errorf("chat history %s: %w", o.HistoryPath, err)
		}
		hist = h
	}
	s := &Screen{o: o, stderr: newStderrLines()}
	s.m = newModel(o, hist)
	s.p = tea.NewProgram(s.m, tea.WithContext(ctx), tea.WithInput(o.In), tea.WithOutput(o.Out), tea.WithEnvironment(o.Env),
		tea.WithFPS(FPS))
	return s, nil
}

// send hands msg to the program: before Run it waits for the program to
// start, after the end it is dropped.
func (s *Screen) send(msg tea.Msg) { s.p.Send(msg) }

// Output is the agent's output for the chat.
func (s *Screen) Output() *Output { return &Output{send: s.send, diff: s.m.diff} }

// Prompter answers approval requests with the modal.
func (s *Screen) Prompter() *Prompter { return &Prompter{send: s.send} }

// Stderr is where hermes' stderr goes while the screen runs: its lines join
// the transcript.
func (s *Screen) Stderr() io.Writer { return s.stderr }

// Inject is ctx.inject_message: the message runs next (a running turn is
// interrupted for it).
func (s *Screen) Inject(text, _ string) bool {
	go s.send(injectMsg{text: text})
	return true
}

// Opener builds the chat the screen drives (app.Host.NewChat).
type Opener func(ctx context.Context) (Chat, error)

// Run shows the chat until the user leaves. The prompt is drawn while open
// builds the chat (state.db, the session row, the system prompt, MCP
// servers): Bubble Tea's first frame waits for its ticker anyway, so the
// opening runs in that wait instead of before it. What the user sends before
// the chat is ready waits for it; the banner and the status line show the
// session once it is known. An error of open ends the screen and is returned.
// Run returns only after open has: what it opened is the caller's to close.
func (s *Screen) Run(ctx context.Context, open Opener, run CommandFunc) error {
	opened := make(chan openedMsg, 1)
	openDone := make(chan struct{})
	go func() {
		defer close(openDone)
		c, err := open(ctx)
		msg := openedMsg{chat: c, err: err}
		if err == nil {
			msg.snap = firstSnapshot(ctx, c)
		}
		opened <- msg
	}()
	defer func() { <-openDone }()
	s.m.opening(ctx, opened, run)
	done := make(chan struct{})
	defer close(done)
	go s.stderr.forward(s.send, done)
	_, err := s.p.Run()
	s.m.stopTurn()
	if s.m.openErr != nil {
		return s.m.openErr
	}
	if err != nil && !errors.Is(err, tea.ErrProgramKilled) && !errors.Is(err, tea.ErrInterrupted) {
		return fmt.Errorf("chat screen: %w", err)
	}
	return nil
}
