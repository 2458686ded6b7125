package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/hermes-go/hermes/internal/agent"
	"github.com/hermes-go/hermes/internal/app"
	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/hooks"
	"github.com/hermes-go/hermes/internal/llm"
	"github.com/hermes-go/hermes/internal/plugins/registry"
	"github.com/hermes-go/hermes/internal/tools"
)

type chatOptions struct {
	query    string
	jsonOut  bool
	resume   string
	model    string
	toolsets string
	noStream bool
}

func newChatCmd(f *app.Factory) *cobra.Command {
	o := &chatOptions{}
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
			return runChat(cmd.Context(), f, o)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&o.query, "query", "q", "", "run one prompt and print the final answer")
	fl.BoolVar(&o.jsonOut, "json", false, "with -q: print the turn's messages and tool calls as JSON")
	fl.StringVar(&o.resume, "resume", "", "continue the stored session `ID` where it stopped")
	fl.StringVar(&o.model, "model", "", "use this model instead of model.default")
	fl.StringVar(&o.toolsets, "toolsets", "", "comma-separated toolsets the model may use (default: config toolsets, else all)")
	fl.BoolVar(&o.noStream, "no-stream", false, "ask the model for whole answers instead of a stream")
	return cmd
}

// chatSession is everything one `hermes chat` run holds.
type chatSession struct {
	f       *app.Factory
	m       *app.Host
	endChat func()
	reg     *registry.Registry
	hooks   *hooks.Dispatcher
	ag      *agent.Agent
	store   chatStore
	sess    *agent.Session
	model   string
	inject  chan string
	mu      sync.Mutex
	running context.CancelFunc // the turn in flight, nil when idle
	quit    bool
}

func runChat(ctx context.Context, f *app.Factory, o *chatOptions) error {
	if o.jsonOut && o.query == "" {
		return &app.ExitError{Code: app.ExitUsage, Message: "Error: --json needs -q PROMPT (it prints one turn)"}
	}
	var pump *linePump
	if o.query == "" {
		// One reader owns stdin: the prompt loop takes lines while idle, the
		// approval prompt takes them while a turn waits on it.
		pump = newLinePump(f.IO.In)
		f.IO.In = pump
	}
	m, err := f.Host(ctx)
	if err != nil {
		return err
	}
	defer m.Close()
	if err := m.Load(ctx); err != nil {
		return err
	}

	// Ctrl-C belongs to the chat from here on: it stops the running turn, not
	// hermes (interruptOnSignal), so the session outlives the root's signal context.
	ctx = context.WithoutCancel(ctx)
	cs, err := newChatSession(ctx, f, m, o)
	if err != nil {
		return err
	}
	defer cs.close()
	if o.query != "" {
		return cs.oneShot(ctx, o)
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

func newChatSession(ctx context.Context, f *app.Factory, m *app.Host, o *chatOptions) (*chatSession, error) {
	h := m.Home()
	doc, err := m.Store().Load()
	if err != nil {
		return nil, err
	}
	cfg := doc.Map()
	modelSection := llm.ModelSection(cfg["model"])
	if o.model != "" {
		modelSection = maps.Clone(modelSection)
		if modelSection == nil {
			modelSection = map[string]any{}
		}
		modelSection["default"] = o.model
	}
	dotenv, err := config.ReadDotenv(h.EnvPath())
	if err != nil {
		return nil, err
	}
	lcfg, err := llm.FromConfig(ctx, modelSection, f.Env, dotenv)
	if err != nil {
		return nil, app.Failf("Error: %v", err)
	}

	cs := &chatSession{f: f, m: m, reg: m.Registry, hooks: m.Registry.Hooks(), model: lcfg.Model, inject: make(chan string, 16)}
	enabled, err := toolsetFilter(o.toolsets, cfg["toolsets"])
	if err != nil {
		return nil, err
	}
	ag := agent.New(agent.Options{
		Model: lcfg.Model, Provider: lcfg.Provider, BaseURL: lcfg.BaseURL,
		Pipeline: m.Pipeline(), Hooks: cs.hooks, ToolEnabled: enabled, Platform: "cli",
		Output: chatOutput{f: f, stream: o.query == ""}, Stream: !o.noStream,
		SystemPrompt:   defaultSystemPrompt,
		SystemSections: cs.reg.RenderSystemPromptSections,
		HookOutputDir:  filepath.Join(h.Dir, "hook_outputs"),
		MaxIterations:  intSetting(cfg, []string{"agent", "max_turns"}, 90),
		Middleware:     cs.reg.LLMChains(),
	})
	ag.ObserveAttempts(&lcfg)
	client, err := llm.New(lcfg)
	if err != nil {
		return nil, app.Failf("Error: %v", err)
	}
	ag.SetClient(client)
	cs.ag = ag

	cs.endChat = m.Chat(client, lcfg, cs.injectMessage)

	store, err := openChatStore(ctx, h.Dir)
	if err != nil {
		return nil, err
	}
	cs.store = store
	if o.resume != "" {
		id, history, err := store.History(ctx, o.resume)
		if err != nil {
			store.Close()
			return nil, app.Failf("Error: %v (list sessions with: hermes sessions list)", err)
		}
		cs.sess = ag.ResumeSession(id, history)
	} else {
		id, err := store.Create(ctx, lcfg.Model, "cli")
		if err != nil {
			return nil, err
		}
		ag.SetRecorder(store)
		cs.sess = ag.NewSession(ctx, id)
	}
	ag.SetRecorder(store)
	if m.Approver != nil {
		m.Approver.SessionKey = cs.sess.ID
	}
	return cs, nil
}

const defaultSystemPrompt = `You are Hermes, an AI agent working on the user's machine through tools.
Use the tools when they help; say plainly what you did and what you found.`

func intSetting(cfg map[string]any, path []string, def int) int {
	var v any = cfg
	for _, p := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return def
		}
		v = mm[p]
	}
	switch n := v.(type) {
	case int:
		return n
	case int64:
		return int(n)
	case uint64:
		return int(n)
	case float64:
		return int(n)
	}
	return def
}

// toolsetFilter turns --toolsets or config `toolsets:` into a tool filter; "all"
// (or nothing) enables every tool.
func toolsetFilter(flag string, fromConfig any) (func(*tools.Tool) bool, error) {
	var names []string
	if flag != "" {
		for _, n := range strings.Split(flag, ",") {
			if n = strings.TrimSpace(n); n != "" {
				names = append(names, n)
			}
		}
	} else if list, ok := fromConfig.([]any); ok {
		for _, v := range list {
			if s, ok := v.(string); ok {
				names = append(names, s)
			}
		}
	}
	if len(names) == 0 || slices.Contains(names, "all") {
		return nil, nil
	}
	return func(t *tools.Tool) bool { return slices.Contains(names, t.Toolset) }, nil
}

// chatOutput shows streamed text (interactive only) and progress lines.
type chatOutput struct {
	f      *app.Factory
	stream bool
}

func (o chatOutput) Text(s string) {
	if o.stream {
		io.WriteString(o.f.IO.Out, s)
	}
}

func (o chatOutput) Progress(s string) { fmt.Fprintln(o.f.IO.Err, s) }

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
func (cs *chatSession) runTurn(ctx context.Context, input string) (*agent.Turn, error) {
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
	return cs.ag.Run(tctx, cs.sess, input)
}

func (cs *chatSession) oneShot(ctx context.Context, o *chatOptions) error {
	stop := cs.interruptOnSignal(ctx)
	defer stop()
	var turns []*agent.Turn
	input := o.query
	var runErr error
	for i := 0; i < 10; i++ {
		t, err := cs.runTurn(ctx, input)
		if t != nil {
			turns = append(turns, t)
		}
		if err != nil && !errors.Is(err, agent.ErrInterrupted) {
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
	if o.jsonOut {
		return cs.printJSON(turns, runErr)
	}
	if runErr != nil {
		if errors.Is(runErr, agent.ErrInterrupted) {
			return app.Failf("Interrupted.")
		}
		return app.Failf("Error: %v", runErr)
	}
	if len(turns) > 0 {
		fmt.Fprintln(cs.f.IO.Out, turns[len(turns)-1].Final)
	}
	fmt.Fprintf(cs.f.IO.Err, "session %s (continue it with: hermes chat --resume %s)\n", cs.sess.ID, cs.sess.ID)
	return nil
}

func (cs *chatSession) printJSON(turns []*agent.Turn, runErr error) error {
	type toolCall struct {
		ID         string       `json:"id"`
		Name       string       `json:"name"`
		Arguments  string       `json:"arguments"`
		Result     string       `json:"result"`
		Status     tools.Status `json:"status"`
		DurationMS int64        `json:"duration_ms"`
	}
	out := struct {
		SessionID string        `json:"session_id"`
		Model     string        `json:"model"`
		Final     string        `json:"final"`
		Messages  []llm.Message `json:"messages"`
		ToolCalls []toolCall    `json:"tool_calls"`
		Error     any           `json:"error"`
	}{SessionID: cs.sess.ID, Model: cs.model, Messages: []llm.Message{}, ToolCalls: []toolCall{}}
	for _, t := range turns {
		out.Final = t.Final
		out.Messages = append(out.Messages, t.Added...)
		for _, r := range t.ToolCalls {
			out.ToolCalls = append(out.ToolCalls, toolCall{ID: r.CallID, Name: r.Name, Arguments: r.Args, Result: r.Result,
				Status: r.Status, DurationMS: r.Duration.Milliseconds()})
		}
	}
	if runErr != nil {
		out.Error = runErr.Error()
	}
	enc := json.NewEncoder(cs.f.IO.Out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return err
	}
	if runErr != nil {
		return app.SilentExit(app.ExitFail)
	}
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
					fmt.Fprintln(cs.f.IO.Err, "\n(interrupted)")
				} else if sig == syscall.SIGTERM {
					cs.mu.Lock()
					cs.quit = true
					cs.mu.Unlock()
				} else {
					fmt.Fprintln(cs.f.IO.Err, "\n(use /quit or Ctrl-D to leave)")
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
	tty := cs.f.IO.CanPrompt()
	if tty {
		fmt.Fprintf(cs.f.IO.Err, "hermes chat · %s · session %s · /help for commands, Ctrl-D to leave\n", cs.model, cs.sess.ID)
	}
	for {
		cs.mu.Lock()
		quit := cs.quit
		cs.mu.Unlock()
		if quit {
			return nil
		}
		if tty {
			fmt.Fprint(cs.f.IO.Out, "\n› ")
		}
		var input string
		select {
		case input = <-cs.inject:
			fmt.Fprintf(cs.f.IO.Err, "[injected] %s\n", input)
		case input = <-lines:
		case <-eof:
			// Injected messages still queued run before leaving.
			select {
			case input = <-cs.inject:
			default:
				if tty {
					fmt.Fprintln(cs.f.IO.Out)
				}
				return nil
			}
		case <-ctx.Done():
			return nil
		}
		if strings.TrimSpace(input) == "" {
			continue
		}
		t, err := cs.runTurn(ctx, input)
		switch {
		case errors.Is(err, errQuit):
			return nil
		case errors.Is(err, agent.ErrInterrupted):
			fmt.Fprintln(cs.f.IO.Err, "(turn stopped; what was said so far is kept)")
		case err != nil:
			fmt.Fprintf(cs.f.IO.Err, "Error: %v\n", err)
		case t != nil && !cs.ag.Streams():
			fmt.Fprintln(cs.f.IO.Out, t.Final)
		case t != nil && t.Final != "" && !t.Streamed:
			// Nothing was streamed (the provider answered whole): show it now.
			fmt.Fprintln(cs.f.IO.Out, t.Final)
		}
	}
}

func (cs *chatSession) close() {
	if cs.endChat != nil {
		cs.endChat()
	}
	if cs.sess != nil && cs.hooks.Has(hooks.HookOnSessionFinalize) {
		cs.hooks.Fire(context.Background(), hooks.HookOnSessionFinalize, map[string]any{"session_id": cs.sess.ID, "platform": "cli", "reason": "exit"})
	}
	if cs.store != nil {
		if cs.sess != nil {
			_ = cs.store.End(context.Background(), cs.sess.ID)
		}
		_ = cs.store.Close()
	}
}
