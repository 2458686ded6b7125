package approval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/hooks"
	"github.com/hermes-go/hermes/internal/termsafe"
	"github.com/hermes-go/hermes/internal/tools"
)

// Choice is a human's answer to an approval request. It is the pipeline's type:
// a plugin's approval directive and a dangerous command are answered alike.
type Choice = tools.ApprovalChoice

// Choices a human can give, as upstream names them.
const (
	ChoiceOnce    = tools.ChoiceOnce
	ChoiceSession = tools.ChoiceSession
	ChoiceAlways  = tools.ChoiceAlways
	ChoiceDeny    = tools.ChoiceDeny
)

// What post_approval_response reports when nobody answered; the request is denied.
const (
	choiceTimeout   Choice = "timeout"
	choiceCancelled Choice = "cancelled"
)

// Scope is how long a granted approval holds for the same pattern keys.
type Scope int

const (
	ScopeCall    Scope = iota // this call only, nothing remembered ("once")
	ScopeSession              // until hermes exits ("session")
	ScopeAlways               // saved to command_allowlist, later runs too ("always")
)

// Firer is the part of the hook dispatcher the approver needs.
type Firer interface {
	Fire(ctx context.Context, hook hooks.Name, payload map[string]any) []any
}

// Prompt is what a human is asked.
type Prompt struct {
	Command     string
	Description string
	PatternKeys []string
	// Origin is who asked for the call: a plugin's request (ctx.dispatch_tool) is
	// shown as the plugin's and is not offered "always".
	Origin tools.Origin
}

// Prompter asks a human for a choice.
type Prompter interface {
	Prompt(ctx context.Context, p Prompt) (Choice, error)
}

// CommandRequest asks whether a dangerous terminal command may run.
type CommandRequest struct {
	Command    string
	Findings   []Finding
	ToolCallID string
	TurnID     string
	Origin     tools.Origin // who asked for the terminal call
}

// CommandApprover is implemented by approvers that understand terminal commands
// with several pattern keys; the terminal tool prefers it over tools.Approver.
type CommandApprover interface {
	ApproveCommand(ctx context.Context, req CommandRequest) (Choice, error)
}

// Approver remembers "session" answers for the run, persists "always" answers to
// command_allowlist in config.yaml, fires pre_approval_request and
// post_approval_response, and asks its Prompter. Without a Prompter nobody can be
// asked, and every request is denied. It implements tools.Approver and
// CommandApprover.
type Approver struct {
	Prompter   Prompter      // nil: nobody to ask, deny
	Store      *config.Store // where "always" is saved; nil: "always" lasts for the run only
	Hooks      Firer         // may be nil
	SessionKey string
	Surface    string    // hook payload surface, "cli" by default
	Warn       io.Writer // where a failed save of "always" is reported (may be nil)
	// Timeout bounds how long a prompt waits for an answer (0 = until the call is
	// cancelled); an unanswered prompt is a deny with choice "timeout" in the hooks.
	Timeout time.Duration
	// Transport, when it selects one, is asked instead of Prompter.
	Transport *TransportRoute

	mu      sync.Mutex
	granted map[string]Scope // pattern key → the longest scope granted for it
}

// NewCLIApprover returns the interactive approver for `hermes chat` and `hermes
// tools call`: prompts go to out, answers come from in. allow seeds the permanent
// allowlist (command_allowlist as read from config).
func NewCLIApprover(in io.Reader, out io.Writer, store *config.Store, allow []string) *Approver {
	a := &Approver{Prompter: NewTTYPrompter(in, out), Store: store, Surface: "cli", Warn: out}
	for _, k := range allow {
		a.remember(k, ScopeAlways)
	}
	return a
}

// SetHooks sets the hook dispatcher (it exists only after plugin discovery).
func (a *Approver) SetHooks(h Firer) {
	a.mu.Lock()
	a.Hooks = h
	a.mu.Unlock()
}

// remember grants key for scope; a longer scope already granted stays.
func (a *Approver) remember(key string, scope Scope) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.granted == nil {
		a.granted = map[string]Scope{}
	}
	a.granted[key] = max(a.granted[key], scope)
}

// approved reports whether every key is granted, and as which choice: the
// shortest scope among the keys.
func (a *Approver) approved(keys []string) (Choice, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(keys) == 0 {
		return "", false
	}
	least := ScopeAlways
	for _, k := range keys {
		least = min(least, a.granted[k])
	}
	switch least {
	case ScopeAlways:
		return ChoiceAlways, true
	case ScopeSession:
		return ChoiceSession, true
	}
	return "", false
}

// Approve answers an approval requested by a plugin's pre_tool_call directive.
func (a *Approver) Approve(ctx context.Context, req tools.ApprovalRequest) (Choice, error) {
	key := req.RuleKey
	if key == "" {
		key = req.ToolName
	}
	desc := req.Message
	if desc == "" {
		desc = "a plugin asked for approval before " + req.ToolName + " runs"
	}
	return a.decide(ctx, approvalInput{
		command: toolCallText(req.ToolName, req.Args), description: desc, keys: []string{key},
		toolCallID: req.ToolCallID, turnID: req.TurnID, origin: req.Origin,
	})
}

// ApproveCommand answers whether a dangerous terminal command may run.
func (a *Approver) ApproveCommand(ctx context.Context, req CommandRequest) (Choice, error) {
	keys := make([]string, 0, len(req.Findings))
	var descs []string
	for _, f := range req.Findings {
		keys = append(keys, f.Key)
		descs = append(descs, f.Description())
	}
	return a.decide(ctx, approvalInput{
		command: req.Command, description: strings.Join(descs, "; "), keys: keys,
		toolCallID: req.ToolCallID, turnID: req.TurnID, origin: req.Origin,
	})
}

type approvalInput struct {
	command, description string
	keys                 []string
	toolCallID, turnID   string
	origin               tools.Origin
}

func (a *Approver) decide(ctx context.Context, in approvalInput) (Choice, error) {
	if choice, ok := a.approved(in.keys); ok {
		return choice, nil // remembered: no prompt, no hooks (as upstream)
	}
	payload := func() map[string]any {
		keys := make([]any, len(in.keys))
		for i, k := range in.keys {
			keys[i] = k
		}
		surface := a.Surface
		if surface == "" {
			surface = "cli"
		}
		return map[string]any{
			"command": in.command, "description": in.description, "pattern_key": in.keys[0],
			"pattern_keys": keys, "session_key": a.SessionKey, "surface": surface,
			"turn_id": in.turnID, "tool_call_id": in.toolCallID,
		}
	}
	a.mu.Lock()
	firer := a.Hooks
	a.mu.Unlock()
	if a.Transport.Selected() {
		choice, handled, err := a.viaTransport(ctx, in, firer)
		if handled {
			if err != nil {
				return ChoiceDeny, err
			}
			return a.settle(ctx, in, choice), nil
		}
	}
	if firer != nil {
		firer.Fire(ctx, hooks.HookPreApprovalRequest, payload())
	}
	choice := ChoiceDeny
	var err error
	if a.Prompter != nil {
		pctx, cancel := ctx, context.CancelFunc(func() {})
		if a.Timeout > 0 {
			pctx, cancel = context.WithTimeout(ctx, a.Timeout)
		}
		choice, err = a.Prompter.Prompt(pctx, Prompt{Command: in.command, Description: in.description, PatternKeys: in.keys, Origin: in.origin})
		cancel()
		switch {
		case err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded):
			choice, err = choiceTimeout, nil
		case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
			choice, err = choiceCancelled, nil
		case err != nil:
			choice = ChoiceDeny
		}
	}
	choice = a.settle(ctx, in, choice)
	if firer != nil {
		p := payload()
		p["choice"] = string(choice) // plain data, as every payload value
		firer.Fire(ctx, hooks.HookPostApprovalResponse, p)
	}
	if choice == choiceCancelled || choice == choiceTimeout {
		return ChoiceDeny, err
	}
	return choice, err
}

// settle remembers what choice grants and returns it as it counts: a
// plugin's request never grants "always", anything unknown is deny.
func (a *Approver) settle(ctx context.Context, in approvalInput, choice Choice) Choice {
	if choice == ChoiceAlways && in.origin.ByPlugin() {
		// Whatever the prompter allowed: a plugin's request never grants "always".
		choice = ChoiceSession
	}
	switch choice {
	case ChoiceSession:
		for _, k := range in.keys {
			a.remember(k, ScopeSession)
		}
	case ChoiceAlways:
		for _, k := range in.keys {
			a.remember(k, ScopeAlways)
		}
		if perr := a.persist(ctx, in.keys); perr != nil && a.Warn != nil {
			fmt.Fprintf(a.Warn, "      Could not save the approval to config.yaml (%v); it holds for this session only.\n", perr)
		}
	case ChoiceOnce, choiceCancelled, choiceTimeout:
	default:
		choice = ChoiceDeny
	}
	return choice
}

// persist appends keys to command_allowlist through the comment-preserving store.
func (a *Approver) persist(ctx context.Context, keys []string) error {
	if a.Store == nil {
		return errors.New("no config file")
	}
	return a.Store.Update(ctx, func(d *config.Doc) error {
		for _, k := range keys {
			if _, err := d.ListAppend(AllowlistKey, k); err != nil {
				return fmt.Errorf("add %q to %s: %w", k, AllowlistKey, err)
			}
		}
		return nil
	})
}

// toolCallText is the call as it would run: the tool and all its arguments
// (cutting them could hide the part that matters).
func toolCallText(name string, args map[string]any) string {
	if len(args) == 0 {
		return name
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(args); err != nil {
		return name
	}
	return name + " " + strings.TrimSuffix(b.String(), "\n")
}

// TTYPrompter asks on a terminal, upstream's way, with the command on lines of
// its own, exactly as it would run and escaped (termsafe), and who asked:
//
//	⚠️  DANGEROUS COMMAND: recursive delete
//	    asked by the model; the command, exactly as it would run:
//	    │ rm -rf /tmp/old-project
//
//	    [o]nce  |  [s]ession  |  [a]lways  |  [d]eny
//
//	    Choice [o/s/a/D]:
//
// A plugin's request (ctx.dispatch_tool) is not offered "always"; answered
// anyway, it counts as "session". An empty answer, end of input or anything
// unrecognised is deny.
type TTYPrompter struct {
	Out io.Writer
	// ReadLine reads one answer line. `hermes chat` passes its line editor's reader so
	// the prompt does not compete with the chat input for stdin.
	ReadLine func(ctx context.Context) (string, error)
	// Redact masks secrets in the command and description shown (upstream
	// redacts the approval display text); nil shows them as they are.
	Redact func(string) string

	mu sync.Mutex
}

// LineReader is a line source that can stop waiting when asked. `hermes chat`'s stdin
// pump implements it so a cancelled or timed-out prompt does not leave a read behind
// that would swallow the user's next chat line.
type LineReader interface {
	ReadLineContext(ctx context.Context) (string, error)
}

// NewTTYPrompter reads answers from in and writes prompts to out. A plain reader is
// read one byte at a time, so nothing after the answer's newline is consumed; a
// LineReader is used as is.
func NewTTYPrompter(in io.Reader, out io.Writer) *TTYPrompter {
	if lr, ok := in.(LineReader); ok {
		return &TTYPrompter{Out: out, ReadLine: lr.ReadLineContext}
	}
	return &TTYPrompter{Out: out, ReadLine: lineReader(in)}
}

func lineReader(in io.Reader) func(ctx context.Context) (string, error) {
	var mu sync.Mutex // one read at a time, even if a cancelled prompt's read lingers
	return func(ctx context.Context) (string, error) {
		type res struct {
			line string
			err  error
		}
		ch := make(chan res, 1)
		go func() {
			mu.Lock()
			defer mu.Unlock()
			var b [1]byte
			var line []byte
			for {
				n, err := in.Read(b[:])
				if n == 1 {
					if b[0] == '\n' {
						ch <- res{line: string(line)}
						return
					}
					line = append(line, b[0])
				}
				if err != nil {
					ch <- res{line: string(line), err: err}
					return
				}
			}
		}()
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case r := <-ch:
			return r.line, r.err
		}
	}
}

// Prompt asks once and waits for a line or ctx.
func (p *TTYPrompter) Prompt(ctx context.Context, pr Prompt) (Choice, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.Redact != nil {
		pr.Command, pr.Description = p.Redact(pr.Command), p.Redact(pr.Description)
	}
	io.WriteString(p.Out, promptText(pr))
	line, err := p.ReadLine(ctx)
	if err != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		fmt.Fprintln(p.Out)
		if errors.Is(err, context.DeadlineExceeded) {
			fmt.Fprintln(p.Out, "      ⏱ Timeout - denying command")
		}
		return ChoiceDeny, err
	}
	if err != nil && line == "" {
		fmt.Fprintln(p.Out) // end of input: nobody answered
		return ChoiceDeny, nil
	}
	choice := parseChoice(line)
	if choice == ChoiceAlways && pr.Origin.ByPlugin() {
		fmt.Fprintln(p.Out, "      \"always\" is not offered for a plugin's request: approved for this session only.")
		choice = ChoiceSession
	}
	return choice, nil
}

// promptText renders the prompt. Everything in it that came from outside (the
// command, a plugin's description, the plugin's name) is escaped, so nothing
// in it can move the cursor, erase the warning or reorder the command.
func promptText(pr Prompt) string {
	var b strings.Builder
	head := "DANGEROUS COMMAND: " + termsafe.Line(pr.Description)
	who := "asked by " + termsafe.Line(pr.Origin.String())
	fmt.Fprintf(&b, "\n  ⚠️  %s\n      %s; the command, exactly as it would run:\n", head, who)
	lines := strings.Split(pr.Command, "\n")
	for _, l := range lines {
		b.WriteString("      │ ")
		b.WriteString(termsafe.Line(l))
		b.WriteByte('\n')
	}
	if len(lines) > 8 || len(pr.Command) > 640 {
		// The warning above may have scrolled away: say it again by the question.
		fmt.Fprintf(&b, "      (end of the command) %s, %s\n", head, who)
	}
	if pr.Origin.ByPlugin() {
		b.WriteString("\n      [o]nce  |  [s]ession  |  [d]eny\n\n      Choice [o/s/D]: ")
	} else {
		b.WriteString("\n      [o]nce  |  [s]ession  |  [a]lways  |  [d]eny\n\n      Choice [o/s/a/D]: ")
	}
	return b.String()
}

func parseChoice(s string) Choice {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "o", "once", "y", "yes":
		return ChoiceOnce
	case "s", "session":
		return ChoiceSession
	case "a", "always":
		return ChoiceAlways
	}
	return ChoiceDeny
}
