package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hermes-go/hermes/internal/app"
	"github.com/hermes-go/hermes/internal/shellhooks"
	"github.com/hermes-go/hermes/internal/termsafe"
)

func newCmdHooks(f *app.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hooks",
		Short: "The shell hooks of config.yaml (hooks:): list, test and revoke them",
		Long: `Shell hooks are commands config.yaml runs at hook events: the event's payload arrives as JSON on
stdin, a directive may come back on stdout (Hermes' shape or Claude Code's), exit code 2 blocks a
pre_tool_call. Each (event, command) runs only once you approved it: at a prompt on a terminal, or
with --accept-hooks, HERMES_ACCEPT_HOOKS=1 or hooks_auto_accept: true. Approvals are kept in
HERMES_HOME/shell-hooks-allowlist.json.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newCmdHooksList(f, nil), newCmdHooksTest(f, nil), newCmdHooksRevoke(f, nil))
	return cmd
}

type hooksListOptions struct {
	IO    *app.IOStreams
	Hooks func() (*app.ShellHooks, error)
	JSON  bool
}

func newCmdHooksList(f *app.Factory, runF func(*hooksListOptions) error) *cobra.Command {
	opts := &hooksListOptions{IO: f.IO, Hooks: f.ShellHooks}
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the configured shell hooks and whether each is approved (runs nothing)",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return hooksListRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "machine-readable output")
	return cmd
}

// hookRow is one hook as `hooks list --json` shows it.
type hookRow struct {
	Event      string  `json:"event"`
	Index      int     `json:"index"`
	Command    string  `json:"command"`
	Matcher    *string `json:"matcher"`
	Timeout    float64 `json:"timeout"`
	FailClosed bool    `json:"fail_closed"`
	Approved   bool    `json:"approved"`
	ApprovedAt string  `json:"approved_at,omitempty"`
	// ScriptChanged: the script's mtime moved since it was approved.
	ScriptChanged bool `json:"script_changed"`
}

func hooksListRun(opts *hooksListOptions) error {
	sh, err := opts.Hooks()
	if err != nil {
		return err
	}
	rows := make([]hookRow, 0, len(sh.Specs))
	for _, s := range sh.Specs {
		r := hookRow{Event: s.Event, Index: s.Index, Command: s.Command, Timeout: s.Timeout.Seconds(), FailClosed: s.FailClosed}
		if s.Matcher != "" {
			r.Matcher = &s.Matcher
		}
		if ap, ok := shellhooks.Lookup(sh.Approvals, s.Event, s.Command); ok {
			r.Approved, r.ApprovedAt = true, ap.ApprovedAt
			now := sh.Allowlist.ScriptMtime(s.Command)
			r.ScriptChanged = ap.ScriptMtime != "" && now != "" && now > ap.ScriptMtime
		}
		rows = append(rows, r)
	}
	out := opts.IO.Out
	if opts.JSON {
		return writeJSON(out, rows)
	}
	if len(rows) == 0 {
		fmt.Fprintln(out, "No shell hooks configured. Add them under hooks: in config.yaml, e.g.")
		fmt.Fprintln(out, "  hooks:\n    pre_tool_call:\n      - matcher: terminal\n        command: ~/.hermes/hooks/guard.sh")
		return nil
	}
	sayf(out, "Configured shell hooks (%d total):\n", len(rows))
	event := ""
	for _, r := range rows {
		if r.Event != event {
			event = r.Event
			sayf(out, "\n  [%s]\n", event)
		}
		var parts []string
		if r.Matcher != nil {
			parts = append(parts, fmt.Sprintf("matcher=%q", *r.Matcher))
		}
		parts = append(parts, fmt.Sprintf("timeout=%gs", r.Timeout))
		if r.FailClosed {
			parts = append(parts, "fail_closed")
		}
		status := "✗ not approved"
		if r.Approved {
			status = "✓ approved"
		}
		sayf(out, "    - %s (%s, %s)\n", termsafe.Line(r.Command), strings.Join(parts, ", "), status)
		if r.ApprovedAt != "" {
			sayf(out, "      approved_at: %s\n", termsafe.Line(r.ApprovedAt))
		}
		if r.ScriptChanged {
			sayf(out, "      ⚠ the script changed since it was approved: review it, then `hermes hooks revoke %s` and approve it again\n", termsafe.Line(r.Command))
		}
	}
	return nil
}

type hooksTestOptions struct {
	IO      *app.IOStreams
	Hooks   func() (*app.ShellHooks, error)
	Event   string
	Payload string
	ForTool string
}

func newCmdHooksTest(f *app.Factory, runF func(*hooksTestOptions) error) *cobra.Command {
	opts := &hooksTestOptions{IO: f.IO, Hooks: f.ShellHooks}
	cmd := &cobra.Command{
		Use:   "test EVENT",
		Short: "Fire the shell hooks of EVENT once with a sample payload and show what each answered",
		Long: `Fire every configured shell hook of EVENT with a sample payload (what hermes sends at that event;
--payload merges JSON keyword arguments over it) and show each hook's exit code, output and the
directive hermes reads from it. Hooks not approved yet are asked about (on a terminal) or skipped;
--accept-hooks approves them.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Event = args[0]
			if runF != nil {
				return runF(opts)
			}
			return hooksTestRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Payload, "payload", "", "a JSON `OBJECT` of payload fields merged over the sample (e.g. '{\"args\": {\"command\": \"rm -rf /\"}}')")
	cmd.Flags().StringVar(&opts.ForTool, "for-tool", "", "the tool_name of a tool event's payload; hooks whose matcher does not match it are left out")
	return cmd
}

// samplePayloads are what `hooks test` sends: the keyword arguments of the
// real fire sites (upstream's samples), so a script sees the runtime shape.
func samplePayload(event string) map[string]any {
	tool := map[string]any{"tool_name": "terminal", "args": map[string]any{"command": "echo hello"},
		"session_id": "test-session", "task_id": "test-task", "tool_call_id": "test-call"}
	switch event {
	case "pre_tool_call":
		return tool
	case "post_tool_call":
		maps.Copy(tool, map[string]any{"result": `{"output": "hello"}`, "duration_ms": 42})
		return tool
	case "pre_llm_call":
		return map[string]any{"session_id": "test-session", "user_message": "What is the weather?",
			"conversation_history": []any{}, "is_first_turn": true, "model": "gpt-4", "platform": "cli"}
	case "post_llm_call":
		return map[string]any{"session_id": "test-session", "model": "gpt-4", "platform": "cli"}
	case "pre_verify":
		return map[string]any{"session_id": "test-session", "platform": "cli", "model": "gpt-4", "coding": true,
			"attempt": 0, "final_response": "All done — the change is applied.", "changed_paths": []any{"src/app.tsx"}}
	case "on_session_end":
		return map[string]any{"session_id": "test-session", "task_id": "test-task", "turn_id": "test-turn",
			"completed": true, "failed": false, "interrupted": false, "turn_exit_reason": "text_response(stop)",
			"model": "gpt-4", "platform": "cli"}
	}
	return map[string]any{"session_id": "test-session"}
}

func hooksTestRun(ctx context.Context, opts *hooksTestOptions) error {
	if err := shellhooks.ValidEvent(opts.Event); err != nil {
		return app.FlagErrorf("%v", err)
	}
	payload := samplePayload(opts.Event)
	payload["telemetry_schema_version"] = "hermes.observer.v1"
	if opts.Payload != "" {
		var extra map[string]any
		if err := json.Unmarshal([]byte(opts.Payload), &extra); err != nil || extra == nil {
			return app.FlagErrorf("--payload must be a JSON object of payload fields, e.g. '{\"args\": {\"command\": \"ls\"}}' (%v)", jsonErr(err))
		}
		maps.Copy(payload, extra)
	}
	if opts.ForTool != "" {
		payload["tool_name"] = opts.ForTool
	}
	sh, err := opts.Hooks()
	if err != nil {
		return err
	}
	var specs []shellhooks.Spec
	for _, s := range sh.Specs {
		if s.Event == opts.Event && (opts.ForTool == "" || s.MatchesTool(opts.ForTool)) {
			specs = append(specs, s)
		}
	}
	out := opts.IO.Out
	if len(specs) == 0 {
		sayf(out, "No shell hooks configured for %s", opts.Event)
		if opts.ForTool != "" {
			sayf(out, " whose matcher matches %s", termsafe.Line(opts.ForTool))
		}
		fmt.Fprintln(out, ".")
		return nil
	}
	sayf(out, "Firing %d hook(s) for %s:\n", len(specs), opts.Event)
	for _, s := range specs {
		sayf(out, "\n  → %s (%s)\n", termsafe.Line(s.Command), s.Where())
		ok, err := sh.Consent(ctx, s)
		if err != nil {
			return err
		}
		if !ok {
			fmt.Fprintln(out, "      skipped: not approved")
			continue
		}
		h := sh.Hook(s)
		var warned []string // shown with the run below, not as warnings besides
		h.Logger = collectWarnings(&warned)
		res, r := h.Fire(ctx, maps.Clone(payload))
		printRun(out, r, res, warned)
	}
	return nil
}

func printRun(w io.Writer, r shellhooks.Result, res map[string]any, warned []string) {
	switch {
	case r.Err != nil:
		sayf(w, "      ✗ error: %s\n", termsafe.Line(r.Err.Error()))
	case r.TimedOut:
		sayf(w, "      ✗ timed out after %s (killed)\n", r.Elapsed.Round(time.Millisecond))
	default:
		sayf(w, "      exit=%d  elapsed=%s\n", r.ExitCode, r.Elapsed.Round(time.Millisecond))
		for _, s := range []struct {
			name string
			text []byte
		}{{"stdout", r.Stdout}, {"stderr", r.Stderr}} {
			if t := strings.TrimSpace(string(s.text)); t != "" {
				sayf(w, "      %s: %s\n", s.name, termsafe.Line(cut(t, 400)))
			}
		}
		if r.StdoutTruncated {
			sayf(w, "      stdout was cut at %d MiB\n", shellhooks.MaxStdout>>20)
		}
	}
	for _, m := range warned {
		if r.Err == nil && !r.TimedOut {
			sayf(w, "      ⚠ %s\n", termsafe.Line(m))
		}
	}
	if res == nil {
		fmt.Fprintln(w, "      result: none (the hook adds nothing)")
		return
	}
	b, _ := json.Marshal(res)
	sayf(w, "      result: %s\n", termsafe.Line(string(b)))
}

// collectWarnings is a logger that keeps each warning's message in out.
func collectWarnings(out *[]string) *slog.Logger {
	return slog.New(warnCollector{out})
}

type warnCollector struct{ out *[]string }

func (c warnCollector) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (c warnCollector) Handle(_ context.Context, r slog.Record) error {
	*c.out = append(*c.out, r.Message)
	return nil
}
func (c warnCollector) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c warnCollector) WithGroup(string) slog.Handler      { return c }

func cut(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func jsonErr(err error) string {
	if err == nil {
		return "got null"
	}
	return err.Error()
}

type hooksRevokeOptions struct {
	IO        *app.IOStreams
	Allowlist func() (shellhooks.Allowlist, error)
	Command   string
}

func newCmdHooksRevoke(f *app.Factory, runF func(*hooksRevokeOptions) error) *cobra.Command {
	opts := &hooksRevokeOptions{IO: f.IO, Allowlist: f.ShellHookAllowlist}
	cmd := &cobra.Command{
		Use:     "revoke COMMAND",
		Aliases: []string{"remove", "rm"},
		Short:   "Withdraw the approval of a hook command (for every event); it is asked about again",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Command = args[0]
			if runF != nil {
				return runF(opts)
			}
			return hooksRevokeRun(cmd.Context(), opts)
		},
	}
	return cmd
}

func hooksRevokeRun(ctx context.Context, opts *hooksRevokeOptions) error {
	a, err := opts.Allowlist()
	if err != nil {
		return err
	}
	n, err := a.Revoke(ctx, opts.Command)
	if err != nil {
		return app.Failf("Error: %v", err)
	}
	if n == 0 {
		return app.Failf("Error: no approval found for %s; `hermes hooks list` shows the commands and which are approved", termsafe.Line(opts.Command))
	}
	sayf(opts.IO.Out, "Revoked %d approval(s) of %s. A hermes already running keeps it until it exits.\n", n, termsafe.Line(opts.Command))
	return nil
}
