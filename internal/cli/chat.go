package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/hermes-go/hermes/internal/app"
	"github.com/hermes-go/hermes/internal/termsafe"
)

// chatOptions are what a `hermes chat` run needs: the terminal, the plugin
// host, and the flags.
type chatOptions struct {
	IO      *app.IOStreams
	Factory *app.Factory

	Query    string
	JSON     bool
	Resume   string
	Model    string
	Provider string
	Toolsets string
	NoStream bool
	// Plain keeps the line mode on a terminal (no full-screen chat).
	Plain bool
}

func newCmdChat(f *app.Factory, runF func(*chatOptions) error) *cobra.Command {
	opts := &chatOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "chat",
		Short: "Talk to the agent (interactive, or one-shot with -q)",
		Long: `Talk to the agent: your model (config.yaml "model" section) with the built-in tools and
every enabled plugin's tools and hooks.

Interactive: type a message and press Enter. Ctrl-C stops the running turn, Ctrl-D or
/quit leaves, /help lists the commands. With -q the one prompt runs, the final answer goes
to stdout and hermes exits; plugin output and progress always go to stderr.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("query") && strings.TrimSpace(opts.Query) == "" {
				return app.FlagErrorf("-q needs a prompt, and the one given is empty: pass the text, or - to read it from standard input")
			}
			if opts.JSON && opts.Query == "" {
				return &app.ExitError{Code: app.ExitUsage, Message: "Error: --json needs -q PROMPT (it prints one turn)"}
			}
			if runF != nil {
				return runF(opts)
			}
			return chatRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Query, "query", "q", "", "run one prompt and print the final answer (- reads it from standard input)")
	fl.BoolVar(&opts.JSON, "json", false, "with -q: print the turn's messages and tool calls as JSON")
	fl.StringVar(&opts.Resume, "resume", "", "continue the stored session `ID` where it stopped")
	fl.StringVarP(&opts.Model, "model", "m", "", "use this model instead of model.default")
	fl.StringVar(&opts.Provider, "provider", "", "use this provider (built-in or a plugin's) instead of model.provider")
	fl.StringVar(&opts.Toolsets, "toolsets", "", "comma-separated toolsets the model may use (default: config toolsets, else all)")
	fl.BoolVar(&opts.NoStream, "no-stream", false, "ask the model for whole answers instead of a stream")
	fl.BoolVar(&opts.Plain, "plain", false, "on a terminal, the line mode instead of the full-screen chat (also HERMES_CHAT_PLAIN=1)")
	return cmd
}

// chatSession is the REPL side of one `hermes chat` run: the chat it drives,
// the queue of injected messages and the turn in flight.
type chatSession struct {
	io      *app.IOStreams
	chat    *app.Chat
	inject  chan string
	out     *chatOutput
	mu      sync.Mutex
	running context.CancelFunc // the turn in flight, nil when idle
	quit    bool
	// retry is the message /retry sends again once the command is done.
	retry string
}

func chatRun(ctx context.Context, opts *chatOptions) error {
	if opts.Query == "-" {
		q, err := readPrompt(ctx, opts.IO)
		if err != nil {
			return err
		}
		opts.Query = q
	}
	var pump *linePump
	f := opts.Factory
	screen := useScreen(opts)
	if opts.Query == "" && !screen {
		// One reader owns stdin: the prompt loop takes lines while idle, the
		// approval prompt takes them while a turn waits on it.
		pump = newLinePump(opts.IO.In)
		f = f.WithStdin(pump)
		opts.IO = f.IO
	}
	if opts.Resume == "" {
		// A new session's system prompt scans its context files: ready the scanner meanwhile.
		go app.WarmContextScan()
	}
	var started <-chan newScreen
	if screen {
		// Ctrl-C belongs to the chat's screen: it outlives the root's signal context.
		started = startScreen(context.WithoutCancel(ctx), opts)
	}
	h, err := f.Host(ctx)
	if err != nil {
		return err
	}
	defer h.Close()
	if err := h.Load(ctx); err != nil {
		return err
	}

	// Ctrl-C belongs to the chat from here on: it stops the running turn, not
	// hermes (interruptOnSignal), so the session outlives the root's signal context.
	ctx = context.WithoutCancel(ctx)
	if screen {
		return chatScreen(ctx, opts, h, started)
	}
	cs := &chatSession{io: opts.IO, inject: make(chan string, 16)}
	cs.out = newChatOutput(opts.IO, opts.Query == "")
	cs.chat, err = h.NewChat(ctx, app.ChatOptions{
		Model: opts.Model, Provider: opts.Provider, Toolsets: opts.Toolsets, NoStream: opts.NoStream, Resume: opts.Resume,
		Output: cs.out,
		Inject: cs.injectMessage,
	})
	if err != nil {
		return err
	}
	defer cs.chat.Close()
	if opts.Query != "" {
		return cs.oneShot(ctx, opts)
	}
	return cs.repl(ctx, pump)
}

// linePump reads stdin line by line on its own goroutine. The prompt loop takes
// lines from Lines; anyone else (the approval prompt) reads it as an io.Reader and
// gets one line per Read, so no reader buffers away a line meant for the other.
type linePump struct {
	lines chan string
	eof   chan struct{}
	buf   []byte
}

func newLinePump(r io.Reader) *linePump {
	p := &linePump{lines: make(chan string), eof: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64*1024), 4<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.eof)
	}()
	return p
}

// ReadLineContext gives the approval prompt one line, or gives up with ctx
// without leaving a read behind that would swallow the next chat line.
func (p *linePump) ReadLineContext(ctx context.Context) (string, error) {
	if len(p.buf) > 0 {
		l := strings.TrimSuffix(string(p.buf), "\n")
		p.buf = nil
		return l, nil
	}
	select {
	case l := <-p.lines:
		return l, nil
	case <-p.eof:
		return "", io.EOF
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func (p *linePump) Read(b []byte) (int, error) {
	if len(p.buf) == 0 {
		select {
		case l := <-p.lines:
			p.buf = []byte(l + "\n")
		case <-p.eof:
			return 0, io.EOF
		}
	}
	n := copy(b, p.buf)
	p.buf = p.buf[n:]
	return n, nil
}

// chatOutput shows streamed text (interactive only) and progress lines. The
// model's text is escaped as it streams (termsafe.Writer: a sequence split
// between two chunks is caught too), so a reply cannot clear the screen,
// retitle the window, plant links or paint over the approval prompt that may
// follow it.
type chatOutput struct {
	io     *app.IOStreams
	stream bool
	text   *termsafe.Writer
}

func newChatOutput(s *app.IOStreams, stream bool) *chatOutput {
	return &chatOutput{io: s, stream: stream, text: termsafe.NewWriter(s.Out)}
}

func (o *chatOutput) Text(s string) {
	if o.stream {
		_, _ = o.text.WriteString(s)
	}
}

// flush ends the streamed text: a character cut short is shown escaped.
func (o *chatOutput) flush() { _ = o.text.Flush() }

// Progress shows a status line; it names tools the model asked for.
func (o *chatOutput) Progress(s string) { fmt.Fprintln(o.io.Err, termsafe.Line(s)) }

// injectMessage is ctx.inject_message in CLI mode: queued as the next input when
// idle; a running turn is interrupted so the message goes next.
func (cs *chatSession) injectMessage(text, role string) bool {
	select {
	case cs.inject <- text:
	default:
		return false // a full queue: the plugin is flooding
	}
	cs.mu.Lock()
	if cs.running != nil {
		cs.running()
	}
	cs.mu.Unlock()
	return true
}

// runTurn runs one user input (a message or a slash command).
func (cs *chatSession) runTurn(ctx context.Context, input string) (*app.Turn, error) {
	if strings.HasPrefix(strings.TrimSpace(input), "/") {
		return nil, cs.slash(ctx, strings.TrimSpace(input))
	}
	tctx, cancel := context.WithCancel(ctx)
	cs.mu.Lock()
	cs.running = cancel
	cs.mu.Unlock()
	defer func() {
		cs.mu.Lock()
		cs.running = nil
		cs.mu.Unlock()
		cancel()
	}()
	defer cs.out.flush()
	return cs.chat.Run(tctx, input)
}

func (cs *chatSession) oneShot(ctx context.Context, opts *chatOptions) error {
	stop := cs.interruptOnSignal(ctx)
	defer stop()
	var turns []*app.Turn
	input := opts.Query
	var runErr error
	for i := 0; i < 10; i++ {
		t, err := cs.runTurn(ctx, input)
		if t != nil {
			turns = append(turns, t)
		}
		if err != nil && !errors.Is(err, app.ErrInterrupted) {
			runErr = err
			break
		}
		// Messages plugins injected during the turn run next, as the CLI would.
		select {
		case next := <-cs.inject:
			input = next
			continue
		default:
		}
		if err != nil {
			runErr = err
		}
		break
	}
	if opts.JSON {
		if err := writeJSON(cs.io.Out, cs.chat.Transcript(turns, runErr)); err != nil {
			return err
		}
		if runErr != nil {
			return app.SilentExit(app.ExitFail)
		}
		return nil
	}
	if runErr != nil {
		if errors.Is(runErr, app.ErrInterrupted) {
			return app.Failf("Interrupted.")
		}
		return app.Failf("Error: %v", runErr)
	}
	if len(turns) > 0 {
		fmt.Fprintln(cs.io.Out, termsafe.Text(cs.chat.Redact(turns[len(turns)-1].Final))) // --json has it as sent
	}
	id := cs.chat.SessionID()
	fmt.Fprintf(cs.io.Err, "session %s (continue it with: hermes chat --resume %s)\n", id, id)
	return nil
}

// interruptOnSignal makes Ctrl-C (SIGINT) stop the running turn instead of hermes.
func (cs *chatSession) interruptOnSignal(ctx context.Context) func() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case sig := <-ch:
				cs.mu.Lock()
				running := cs.running
				cs.mu.Unlock()
				if running != nil {
					running()
					fmt.Fprintln(cs.io.Err, "\n(interrupted)")
				} else if sig == syscall.SIGTERM {
					cs.mu.Lock()
					cs.quit = true
					cs.mu.Unlock()
				} else {
					fmt.Fprintln(cs.io.Err, "\n(use /quit or Ctrl-D to leave)")
				}
			}
		}
	}()
	return func() { signal.Stop(ch); close(done) }
}

// repl is the interactive loop: lines from stdin, injected messages, slash commands.
func (cs *chatSession) repl(ctx context.Context, pump *linePump) error {
	stop := cs.interruptOnSignal(ctx)
	defer stop()
	lines, eof := pump.lines, pump.eof
	tty := cs.io.CanPrompt()
	if tty {
		sayf(cs.io.Err, "hermes chat · %s · session %s · /help for commands, Ctrl-D to leave\n", cs.chat.Model(), cs.chat.SessionID())
	}
	if cs.chat.Resumed() {
		cs.recap()
	}
	for {
		cs.mu.Lock()
		quit := cs.quit
		cs.mu.Unlock()
		if quit {
			return nil
		}
		if tty {
			fmt.Fprint(cs.io.Out, "\n› ")
		}
		var input string
		select {
		case input = <-cs.inject:
			fmt.Fprintf(cs.io.Err, "[injected] %s\n", termsafe.Line(input))
		case input = <-lines:
		case <-eof:
			// Injected messages still queued run before leaving.
			select {
			case input = <-cs.inject:
			default:
				if tty {
					fmt.Fprintln(cs.io.Out)
				}
				return nil
			}
		case <-ctx.Done():
			return nil
		}
		// A /retry leaves the message to send again in cs.retry.
		for strings.TrimSpace(input) != "" {
			if cs.turn(ctx, input) {
				return nil
			}
			input, cs.retry = cs.retry, ""
		}
	}
}

// turn runs one input of the loop and shows its outcome; it reports whether
// the chat should end.
func (cs *chatSession) turn(ctx context.Context, input string) (quit bool) {
	t, err := cs.runTurn(ctx, input)
	switch {
	case errors.Is(err, errQuit):
		return true
	case errors.Is(err, app.ErrInterrupted):
		fmt.Fprintln(cs.io.Err, "(turn stopped; what was said so far is kept)")
	case err != nil:
		fmt.Fprintf(cs.io.Err, "Error: %s\n", termsafe.Text(cs.chat.Redact(err.Error())))
	case t != nil && !cs.chat.Streams():
		fmt.Fprintln(cs.io.Out, termsafe.Text(cs.chat.Redact(t.Final)))
	case t != nil && t.Final != "" && !t.Streamed:
		// Nothing was streamed (the provider answered whole): show it now.
		fmt.Fprintln(cs.io.Out, termsafe.Text(cs.chat.Redact(t.Final)))
	}
	return false
}
