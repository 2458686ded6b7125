package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hermes-go/hermes/internal/app"
	"github.com/hermes-go/hermes/internal/session"
	"github.com/hermes-go/hermes/internal/tools"
)

func newCmdSessions(f *app.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List, show, search and delete stored conversations ($HERMES_HOME/state.db, or gateway.store's PostgreSQL)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newCmdSessionsList(f, nil), newCmdSessionsShow(f, nil), newCmdSessionsSearch(f, nil), newCmdSessionsDelete(f, nil))
	return cmd
}

// openSessions opens state.db; with mustExist a missing file is nil (see
// app.Factory.Sessions).
type openSessions func(ctx context.Context, mustExist bool) (session.Backend, error)

func noSession(id string) error {
	return app.Failf("Error: no session %q; see: hermes sessions list", id)
}

type resolver interface {
	Resolve(ctx context.Context, idOrPrefix string) (string, error)
}

// resolveSession turns an id or a unique prefix into an id, with CLI errors.
func resolveSession(ctx context.Context, s resolver, id string) (string, error) {
	if s == nil {
		return "", noSession(id)
	}
	full, err := s.Resolve(ctx, id)
	if errors.Is(err, session.ErrNotFound) {
		return "", noSession(id)
	}
	if err != nil {
		return "", app.Failf("Error: %v", err)
	}
	return full, nil
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Local().Format("2006-01-02 15:04")
}

type sessionsListOptions struct {
	IO       *app.IOStreams
	Sessions openSessions
	Color    func() bool

	JSON  bool
	Limit int
}

func newCmdSessionsList(f *app.Factory, runF func(*sessionsListOptions) error) *cobra.Command {
	opts := &sessionsListOptions{IO: f.IO, Sessions: f.Sessions, Color: f.Color}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List sessions, most recent first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return sessionsListRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "machine-readable output")
	cmd.Flags().IntVarP(&opts.Limit, "limit", "n", 50, "show at most `N` sessions (0: all)")
	return cmd
}

func sessionsListRun(ctx context.Context, opts *sessionsListOptions) error {
	s, err := opts.Sessions(ctx, true)
	if err != nil {
		return err
	}
	list := []session.Session{}
	if s != nil {
		defer func() { _ = s.Close() }()
		if list, err = s.List(ctx, opts.Limit); err != nil {
			return app.Failf("Error: %v", err)
		}
	}
	out := opts.IO.Out
	if opts.JSON {
		return writeJSON(out, list)
	}
	if len(list) == 0 {
		fmt.Fprintln(out, "No sessions yet. Start one with: hermes chat")
		return nil
	}
	t := &table{color: opts.Color()}
	keyed, chained := false, false // Key and Parent columns only when some session has one
	for _, x := range list {
		keyed = keyed || x.Key != ""
		chained = chained || x.ParentID != ""
	}
	head := []string{"ID", "Title", "Model", "Messages", "Updated"}
	if keyed {
		head = append(head, "Key")
	}
	if chained {
		head = append(head, "Parent")
	}
	t.header(head...)
	for _, x := range list {
		title := x.Title
		if title == "" && x.Preview != "" {
			title = strconv.Quote(truncate(x.Preview, 40))
		}
		cells := []string{x.ID, truncate(title, 50), x.Model, strconv.Itoa(x.MessageCount), formatTime(x.UpdatedAt)}
		if keyed {
			cells = append(cells, x.Key)
		}
		if chained {
			cells = append(cells, x.ParentID)
		}
		t.row(cells...)
	}
	t.write(out)
	return nil
}

// maxShown caps one message's text in `sessions show` (a huge tool output would
// bury the conversation); --json always has everything.
const maxShown = 2000

type sessionsShowOptions struct {
	IO       *app.IOStreams
	Sessions openSessions

	ID   string
	JSON bool
}

func newCmdSessionsShow(f *app.Factory, runF func(*sessionsShowOptions) error) *cobra.Command {
	opts := &sessionsShowOptions{IO: f.IO, Sessions: f.Sessions}
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Print a session's conversation (an id prefix is enough when only one session has it)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			if runF != nil {
				return runF(opts)
			}
			return sessionsShowRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "machine-readable output (the session, every message and tool call)")
	return cmd
}

func sessionsShowRun(ctx context.Context, opts *sessionsShowOptions) error {
	s, err := opts.Sessions(ctx, true)
	if err != nil {
		return err
	}
	if s != nil {
		defer func() { _ = s.Close() }()
	}
	id, err := resolveSession(ctx, s, opts.ID)
	if err != nil {
		return err
	}
	sess, err := s.Get(ctx, id)
	if err != nil {
		return app.Failf("Error: %v", err)
	}
	msgs, err := s.History(ctx, id)
	if err != nil {
		return app.Failf("Error: %v", err)
	}
	calls, err := s.ToolCalls(ctx, id)
	if err != nil {
		return app.Failf("Error: %v", err)
	}
	usage, err := s.Usage(ctx, id)
	if err != nil {
		return app.Failf("Error: %v", err)
	}
	if opts.JSON {
		if msgs == nil {
			msgs = []session.Message{}
		}
		if calls == nil {
			calls = []session.ToolCall{}
		}
		if usage == nil {
			usage = []session.TurnUsage{}
		}
		return writeJSON(opts.IO.Out, map[string]any{"session": sess, "messages": msgs, "tool_calls": calls, "usage": usage})
	}
	printSession(opts.IO.Out, sess, msgs, calls)
	if len(usage) > 0 {
		fmt.Fprintln(opts.IO.Out)
		writeUsage(opts.IO.Out, usage, 0)
	}
	return nil
}

func printSession(w io.Writer, sess session.Session, msgs []session.Message, calls []session.ToolCall) {
	head := []string{"Session " + sess.ID}
	if sess.Model != "" {
		head = append(head, "model "+sess.Model)
	}
	if sess.Source != "" {
		head = append(head, "source "+sess.Source)
	}
	head = append(head, fmt.Sprintf("%d messages", sess.MessageCount))
	sayf(w, "%s\n", strings.Join(head, " · "))
	if sess.Title != "" {
		sayf(w, "Title: %s\n", sess.Title)
	}
	when := "Started " + formatTime(sess.CreatedAt)
	if sess.EndedAt != nil {
		when += " · ended " + formatTime(*sess.EndedAt)
	}
	fmt.Fprintln(w, when)

	status := map[string]session.ToolCall{}
	for _, c := range calls {
		status[c.CallID] = c
	}
	for _, m := range msgs {
		fmt.Fprintln(w)
		tag := m.Role
		if m.Role == "tool" {
			if m.Name != "" {
				tag += " " + m.Name
			}
			if c, ok := status[m.ToolCallID]; ok && c.Status != "" && c.Status != string(tools.StatusOK) {
				tag += " · " + c.Status
			}
		}
		text := m.Content
		if n := len([]rune(text)); n > maxShown {
			text = string([]rune(text)[:maxShown]) + fmt.Sprintf("\n… (%d more characters; --json shows all)", n-maxShown)
		}
		// What the model and the tools said is shown escaped, line by line.
		var lines []string
		if text != "" {
			lines = strings.Split(safeText(text), "\n")
		}
		for _, tc := range m.ToolCalls {
			lines = append(lines, "→ "+safe(tc.Function.Name)+" "+safe(truncate(tc.Function.Arguments, 200)))
		}
		if len(lines) == 0 {
			lines = []string{""}
		}
		fmt.Fprintf(w, "[%s] %s\n", safe(tag), lines[0])
		for _, l := range lines[1:] {
			fmt.Fprintln(w, "  "+l)
		}
	}
}

type sessionsSearchOptions struct {
	IO       *app.IOStreams
	Sessions openSessions
	Color    func() bool

	Term  string // the words of TERM..., joined by spaces
	JSON  bool
	Limit int
}

func newCmdSessionsSearch(f *app.Factory, runF func(*sessionsSearchOptions) error) *cobra.Command {
	opts := &sessionsSearchOptions{IO: f.IO, Sessions: f.Sessions, Color: f.Color}
	cmd := &cobra.Command{
		Use:   "search TERM...",
		Short: "Find messages containing every word of TERM (full-text, case-insensitive)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Term = strings.Join(args, " ")
			if strings.TrimSpace(opts.Term) == "" {
				return &app.ExitError{Code: app.ExitUsage, Message: "Error: search needs a word to look for"}
			}
			if runF != nil {
				return runF(opts)
			}
			return sessionsSearchRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "machine-readable output")
	cmd.Flags().IntVarP(&opts.Limit, "limit", "n", 50, "show at most `N` matches")
	return cmd
}

func sessionsSearchRun(ctx context.Context, opts *sessionsSearchOptions) error {
	s, err := opts.Sessions(ctx, true)
	if err != nil {
		return err
	}
	hits := []session.Hit{}
	if s != nil {
		defer func() { _ = s.Close() }()
		if hits, err = s.Search(ctx, opts.Term, opts.Limit); err != nil {
			return app.Failf("Error: %v", err)
		}
	}
	out := opts.IO.Out
	if opts.JSON {
		return writeJSON(out, hits)
	}
	if len(hits) == 0 {
		fmt.Fprintf(out, "No messages match %q.\n", opts.Term)
		return nil
	}
	t := &table{color: opts.Color()}
	t.header("Session", "#", "Role", "Match")
	for _, h := range hits {
		t.row(h.SessionID, strconv.Itoa(h.Seq), h.Role, truncate(h.Snippet, 90))
	}
	t.write(out)
	return nil
}

type sessionsDeleteOptions struct {
	IO       *app.IOStreams
	Sessions openSessions

	ID   string // the full id: a prefix is fine for reading, not for deleting
	JSON bool
}

func newCmdSessionsDelete(f *app.Factory, runF func(*sessionsDeleteOptions) error) *cobra.Command {
	opts := &sessionsDeleteOptions{IO: f.IO, Sessions: f.Sessions}
	cmd := &cobra.Command{
		Use:   "delete ID",
		Short: "Delete a session with its messages and tool calls",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			if runF != nil {
				return runF(opts)
			}
			return sessionsDeleteRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "machine-readable output")
	return cmd
}

func sessionsDeleteRun(ctx context.Context, opts *sessionsDeleteOptions) error {
	s, err := opts.Sessions(ctx, true)
	if err != nil {
		return err
	}
	if s == nil {
		return noSession(opts.ID)
	}
	defer func() { _ = s.Close() }()
	sess, err := s.Get(ctx, opts.ID)
	if errors.Is(err, session.ErrNotFound) {
		return noSession(opts.ID)
	}
	if err != nil {
		return app.Failf("Error: %v", err)
	}
	if err := s.Delete(ctx, sess.ID); err != nil {
		return app.Failf("Error: %v", err)
	}
	if opts.JSON {
		return writeJSON(opts.IO.Out, map[string]any{"deleted": sess.ID, "messages": sess.MessageCount})
	}
	sayf(opts.IO.Out, "Deleted session %s (%d messages).\n", sess.ID, sess.MessageCount)
	return nil
}
