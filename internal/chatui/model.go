package chatui

import (
	"context"
	"errors"
	"fmt"
	"github.com/charmbracelet/x/ansi"
	"strings"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/hermes-go/hermes/internal/agent"
	"github.com/hermes-go/hermes/internal/chatui/editor"
	"github.com/hermes-go/hermes/internal/chatui/mdstream"
	"github.com/hermes-go/hermes/internal/chatui/toolview"
	"github.com/hermes-go/hermes/internal/termsafe"
)

// Model is the chat screen as a tea.Model. Its methods run on the program's
// loop only; the turn and the commands run in tea.Cmd goroutines and report
// back with messages, carrying a snapshot of the chat so that View never
// reads the chat while a command changes it.
type Model struct {
	o     Options
	ctx   context.Context
	chat  Chat
	run   CommandFunc
	width int
	high  int
	cols  atomic.Int64 // width, for the agent's goroutine (diffs)

	ed editor.Model

	// Transcript lines waiting to go to the scrollback, and whether a print
	// is in flight: one at a time keeps them in order.
	pending  []string
	printing bool

	busy        bool               // a turn or a command runs
	cancel      context.CancelFunc // the running turn's
	interrupted bool
	md          *mdstream.Stream
	reasoning   strings.Builder
	tools       []toolview.Call // started this turn, not yet ended
	lastTool    *toolview.Call  // the last that ended
	expand      func() string   // what Ctrl-O prints: the last folded output whole (a tool's result, reasoning)
	rsMemo      reasoningMemo
	waiting     string   // what hermes waits for: "model", "tool NAME", "approval"
	notice      string   // the last progress line of the turn (a retry)
	queue       []string // inputs typed or injected while busy
	frame       int
	ticking     bool

	snap     snapshot
	appr     *approvalReq
	picker   *sessionPicker
	ctrlC    bool // Ctrl-C pressed once on an idle, empty editor
	quitting bool

	// opened brings the chat while it is still being opened (Screen.Run
	// draws the prompt first); what is sent before it waits in the queue.
	opened  <-chan openedMsg
	openErr error
}

// frames is the spinner of running tools and of the wait.
var frames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

func newModel(o Options, hist *editor.History) *Model {
	m := &Model{o: o, width: 80, high: 24, ctx: context.Background()}
	m.cols.Store(80)
	m.ed = editor.New(editor.Options{History: hist, Prompt: "› ", Width: m.width, Color: o.Color, Complete: m.completer(nil)})
	return m
}

// attach gives the model its chat before the program starts.
func (m *Model) attach(ctx context.Context, chat Chat, run CommandFunc) {
	m.ctx, m.run = ctx, run
	m.setChat(chat, firstSnapshot(ctx, chat))
}

// opening gives the model the chat still being opened: it comes as an
// openedMsg on ch once ready.
func (m *Model) opening(ctx context.Context, ch <-chan openedMsg, run CommandFunc) {
	m.ctx, m.run, m.opened = ctx, run, ch
}

func (m *Model) setChat(chat Chat, snap snapshot) {
	m.chat, m.snap = chat, snap
	m.ed.SetCompleter(m.completer(chat.Commands())) // the plugins' commands are known now
}

// chatOpened is the chat ready: its banner, then what was sent meanwhile.
func (m *Model) chatOpened(msg openedMsg) tea.Cmd {
	if msg.err != nil {
		m.openErr = msg.err
		return m.quit()
	}
	m.setChat(msg.chat, msg.snap)
	m.banner()
	return m.next()
}

// stopTurn cancels a turn still running when the program ends.
func (m *Model) stopTurn() {
	if m.cancel != nil {
		m.cancel()
	}
}

// Messages the program gets from the turn, the commands and the prompter.
type (
	textMsg      struct{ s string }
	reasoningMsg struct{ s string }
	progressMsg  struct{ s string }
	toolStartMsg struct {
		id, name, args, diff string
		hasDiff              bool
	}
	toolEndMsg struct {
		id, name, result, err string
		blocked               bool
		dur                   time.Duration
	}
	turnDoneMsg struct {
		turn *agent.Turn
		err  error
		snap snapshot
	}
	cmdDoneMsg struct {
		res  CommandResult
		snap snapshot
	}
	injectMsg struct{ text string }
	openedMsg struct {
		chat Chat
		err  error
		snap snapshot
	}
	tickMsg    struct{}
	printedMsg struct{}
)

// Init prints the banner (and a resumed session's recap), or waits for the
// chat being opened to do so.
func (m *Model) Init() tea.Cmd {
	if m.chat == nil {
		if ch := m.opened; ch != nil {
			return func() tea.Msg { return <-ch }
		}
		return nil
	}
	m.banner()
	return m.flush()
}

func (m *Model) banner() {
	m.print(termsafe.Line("hermes chat · "+m.snap.model+" · session "+m.snap.session), "/help for commands, Ctrl-D to leave")
	if m.snap.resumed {
		m.print(recap(m.chat, m.mdOpts())...)
	}
}

// Update implements tea.Model.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := m.update(msg)
	return m, tea.Batch(cmd, m.flush())
}

func (m *Model) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.high = max(msg.Width, 10), max(msg.Height, 4)
		m.cols.Store(int64(m.width))
		m.ed.SetWidth(m.width)
		if m.md != nil {
			// The scrollback stays as printed; the answer's tail and what is
			// still to come wrap at the new width.
			m.md.SetWidth(m.width)
		}
		if m.picker != nil {
			m.picker.setSize(m.width, m.high)
		}
		return nil
	case tea.KeyPressMsg:
		return m.key(msg)
	case editor.SubmitMsg:
		return m.submit(msg.Text)
	case editor.ClearScreenMsg:
		return tea.ClearScreen
	case editor.PasteCutMsg:
		m.print(fmt.Sprintf("(the paste had %d lines; the editor holds the first %d)", msg.Lines, msg.Kept))
		return nil
	case editor.HistoryErrorMsg:
		m.print("(not saved to the history: " + termsafe.Line(msg.Err.Error()) + ")")
		return nil
	case printedMsg:
		m.printing = false
		return nil
	case tickMsg:
		m.frame++
		if m.busy {
			return tick()
		}
		m.ticking = false
		return nil
	case textMsg:
		m.streamText(msg.s)
		return nil
	case reasoningMsg:
		m.reasoning.WriteString(msg.s)
		return nil
	case progressMsg:
		m.progress(msg.s)
		return nil
	case toolStartMsg:
		m.toolStart(msg)
		return nil
	case toolEndMsg:
		m.toolEnd(msg)
		return nil
	case turnDoneMsg:
		return m.turnDone(msg)
	case cmdDoneMsg:
		return m.cmdDone(msg)
	case injectMsg:
		return m.inject(msg.text)
	case openedMsg:
		return m.chatOpened(msg)
	case approvalMsg:
		m.appr = msg.req
		return nil
	case approvalGoneMsg:
		if m.appr == msg.req {
			m.appr = nil
			m.print(termsafe.Line("⏱ no answer in time: denied"))
		}
		return nil
	case waitMsg:
		switch {
		case msg.done:
			if m.waiting == "model" {
				m.waiting = ""
			}
			m.notice = ""
		case msg.retry:
			m.notice = termsafe.Line(msg.status)
		default:
			m.waiting = "model"
		}
		return nil
	case stderrMsg:
		m.print(msg.lines...)
		return nil
	case sessionsMsg:
		return m.openPicker(msg)
	case resumedMsg:
		return m.resumed(msg)
	}
	var cmd tea.Cmd
	m.ed, cmd = m.ed.Update(msg) // a paste, a focus change...
	return cmd
}

func (m *Model) key(k tea.KeyPressMsg) tea.Cmd {
	if m.appr != nil {
		return m.approvalKey(k)
	}
	if m.picker != nil {
		return m.pickerKey(k)
	}
	switch k.String() {
	case "ctrl+c":
		switch {
		case m.busy && m.cancel != nil:
			m.interrupted = true
			m.cancel()
		case m.ed.Value() != "":
			m.ed.Reset()
		case m.ctrlC:
			return m.quit()
		default:
			m.ctrlC = true
			m.print("(Ctrl-C again or Ctrl-D to leave)")
		}
		return nil
	case "ctrl+d":
		if m.ed.Value() == "" {
			return m.quit()
		}
		return nil
	case "ctrl+o":
		if m.expand != nil {
			m.print(m.expand())
		}
		return nil
	}
	m.ctrlC = false
	var cmd tea.Cmd
	m.ed, cmd = m.ed.Update(k)
	return cmd
}

func (m *Model) quit() tea.Cmd {
	m.quitting = true
	m.stopTurn()
	return tea.Quit
}

// submit runs what the user sent: a message or a slash command. While a turn
// runs, or the chat is still being opened, it waits in the queue.
func (m *Model) submit(text string) tea.Cmd {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	if m.busy || m.chat == nil {
		m.queue = append(m.queue, text)
		m.print(termsafe.Line("(queued: " + oneLine(text) + ")"))
		return nil
	}
	m.print(m.userLines(text)...)
	line := strings.TrimSpace(text)
	if strings.HasPrefix(line, "/") {
		return m.command(line)
	}
	return m.startTurn(text)
}

// userLines shows a message as the user typed it.
func (m *Model) userLines(text string) []string {
	out := []string{""}
	for i, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		l = termsafe.Line(l)
		if m.width > 2 {
			l = ansi.Wrap(l, m.width-2, "") // the terminal would cut words in two
		}
		for j, seg := range strings.Split(l, "\n") {
			p := "  "
			if i == 0 && j == 0 {
				p = "› "
			}
			out = append(out, style(m.o.Color, styleUser, p+seg))
		}
	}
	return out
}

func (m *Model) command(line string) tea.Cmd {
	name, args, _ := strings.Cut(strings.TrimPrefix(line, "/"), " ")
	if strings.EqualFold(name, "resume") {
		return m.resume(strings.TrimSpace(args))
	}
	m.busy, m.waiting = true, "/"+strings.ToLower(name)
	ctx, chat, run := m.ctx, m.chat, m.run
	return tea.Batch(m.startTick(), func() tea.Msg {
		res := run(ctx, line)
		return cmdDoneMsg{res: res, snap: takeSnapshot(ctx, chat)}
	})
}

func (m *Model) cmdDone(msg cmdDoneMsg) tea.Cmd {
	m.busy, m.waiting, m.snap = false, "", msg.snap
	if out := strings.TrimRight(msg.res.Output, "\n"); out != "" {
		m.print(m.wrap(out))
	}
	if msg.res.Err != nil {
		m.print(m.wrap("Error: " + termsafe.Line(msg.snap.redact(msg.res.Err.Error()))))
	}
	if msg.res.Quit {
		return m.quit()
	}
	if msg.res.Retry != "" {
		return m.startTurn(msg.res.Retry)
	}
	return m.next()
}

func (m *Model) startTurn(input string) tea.Cmd {
	ctx, cancel := context.WithCancel(m.ctx)
	m.busy, m.cancel, m.interrupted = true, cancel, false
	m.waiting, m.notice = "model", ""
	m.md = mdstream.New(m.mdOpts())
	m.resetReasoning()
	m.tools = nil
	chat, base := m.chat, m.ctx
	return tea.Batch(m.startTick(), func() tea.Msg {
		t, err := chat.Run(ctx, input)
		cancel()
		return turnDoneMsg{turn: t, err: err, snap: takeSnapshot(base, chat)}
	})
}

func (m *Model) turnDone(msg turnDoneMsg) tea.Cmd {
	m.endStream()
	for _, c := range m.tools { // never ended: the turn stopped under them
		c.Done, c.Err = true, "stopped"
		m.print(toolview.Header(c, m.width, "", m.o.Color))
	}
	m.tools = nil
	m.busy, m.cancel, m.waiting, m.notice, m.snap = false, nil, "", "", msg.snap
	t, err := msg.turn, msg.err
	switch {
	case errors.Is(err, agent.ErrInterrupted) || (m.interrupted && errors.Is(err, context.Canceled)):
		m.print(style(m.o.Color, styleDim, "(turn stopped; what was said so far is kept)"))
	case err != nil:
		m.print("Error: " + termsafe.Line(msg.snap.redact(err.Error())))
	case t != nil && t.Final != "" && (!t.Streamed || !msg.snap.streams):
		m.print(mdstream.Render(msg.snap.redact(t.Final), m.mdOpts()))
	}
	return m.next()
}

// next runs the next queued input, if any.
func (m *Model) next() tea.Cmd {
	if m.busy || len(m.queue) == 0 {
		return nil
	}
	text := m.queue[0]
	m.queue = m.queue[1:]
	return m.submit(text)
}

// inject is a plugin's ctx.inject_message: it goes next, interrupting a turn.
func (m *Model) inject(text string) tea.Cmd {
	m.print(termsafe.Line("[injected] " + oneLine(text)))
	if !m.busy && m.chat != nil {
		return m.startTurn(text)
	}
	m.queue = append([]string{text}, m.queue...)
	if m.cancel != nil {
		m.interrupted = true
		m.cancel()
	}
	return nil
}

func (m *Model) streamText(s string) {
	if m.md == nil {
		m.md = mdstream.New(m.mdOpts())
	}
	if m.waiting == "model" {
		m.waiting = ""
	}
	m.print(m.md.Write(s)...)
}

// endStream finalises the streamed answer so far (before a tool row, at the
// end of the turn).
func (m *Model) endStream() {
	if m.reasoning.Len() > 0 {
		m.print(m.foldedReasoning()...)
		m.resetReasoning()
	}
	if m.md != nil {
		m.print(m.md.Close()...)
		m.md = mdstream.New(m.mdOpts())
	}
}

// progress is a status line of the turn (a warning, the context engine's
// notes); tools come as events, the wait's retries through Waiting.
func (m *Model) progress(s string) {
	m.notice = termsafe.Line(s)
	m.print(style(m.o.Color, styleDim, "  "+m.notice))
}

func (m *Model) toolStart(e toolStartMsg) {
	m.endStream()
	c := toolview.Call{ID: e.id, Name: e.name, Args: e.args}
	m.tools = append(m.tools, c)
	m.waiting = "tool " + termsafe.Line(e.name)
	if e.hasDiff {
		m.print(toolview.Header(c, m.width, "•", m.o.Color), e.diff)
	}
}

// diff is Output's: the change a file tool will make, at the screen's width.
func (m *Model) diff(name, args string) (string, bool) {
	return toolview.Diff(name, args, toolview.FileReader(m.o.Cwd, m.o.Home), int(m.cols.Load()), m.o.Color)
}

func (m *Model) toolEnd(e toolEndMsg) {
	c := toolview.Call{ID: e.id, Name: e.name}
	for i, t := range m.tools {
		if t.ID == e.id {
			c = t
			m.tools = append(m.tools[:i:i], m.tools[i+1:]...)
			break
		}
	}
	c.Done, c.Result, c.Err, c.Blocked, c.Duration = true, e.result, e.err, e.blocked, e.dur
	m.print(toolview.Header(c, m.width, "", m.o.Color), toolview.Summary(c, m.width, m.o.Color))
	m.lastTool = &c
	m.expand = func() string { return toolview.Expanded(c, m.width, m.o.Color) }
	m.waiting = "model"
	if len(m.tools) > 0 {
		m.waiting = "tool " + termsafe.Line(m.tools[0].Name)
	}
}

func (m *Model) mdOpts() mdstream.Options { return mdstream.Options{Width: m.width, Color: m.o.Color} }

// wrap breaks a command's plain output at spaces to the screen's width,
// rather than leaving the terminal to cut words in two.
func (m *Model) wrap(s string) string { return hangWrap(s, m.width) }

// print queues lines for the scrollback.
func (m *Model) print(lines ...string) { m.pending = append(m.pending, lines...) }

// flush prints the queued lines above the screen, one print at a time.
func (m *Model) flush() tea.Cmd {
	if m.printing || len(m.pending) == 0 {
		return nil
	}
	text := strings.Join(m.pending, "\n")
	m.pending, m.printing = nil, true
	return tea.Sequence(tea.Println(text), func() tea.Msg { return printedMsg{} })
}

func (m *Model) startTick() tea.Cmd {
	if m.ticking {
		return nil
	}
	m.ticking = true
	return tick()
}

func tick() tea.Cmd {
	return tea.Tick(100*time.Millisecond, func(time.Time) tea.Msg { return tickMsg{} })
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 70 {
		s = string(r[:69]) + "…"
	}
	return termsafe.Line(s)
}
