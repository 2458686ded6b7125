package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hermes-go/hermes/internal/session"
	"github.com/hermes-go/hermes/internal/tools"
)

func newSessionsCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List, show, search and delete stored conversations ($HERMES_HOME/state.db)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newSessionsListCmd(app), newSessionsShowCmd(app), newSessionsSearchCmd(app), newSessionsDeleteCmd(app))
	return cmd
}

// openSessions opens state.db. With mustExist, a missing file is reported as nil
// without creating it, so read-only commands leave HERMES_HOME alone.
func (a *App) openSessions(ctx context.Context, mustExist bool) (*session.Store, error) {
	h, err := a.Home()
	if err != nil {
		return nil, err
	}
	path := session.Path(h.Dir)
	if mustExist {
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
	}
	s, err := session.Open(ctx, path)
	if err != nil {
		return nil, failf("Error: %v", err)
	}
	return s, nil
}

func noSession(id string) error {
	return failf("Error: no session %q; see: hermes sessions list", id)
}

// resolveSession turns an id or a unique prefix into an id, with CLI errors.
func resolveSession(ctx context.Context, s *session.Store, id string) (string, error) {
	if s == nil {
		return "", noSession(id)
	}
	full, err := s.Resolve(ctx, id)
	if errors.Is(err, session.ErrNotFound) {
		return "", noSession(id)
	}
	if err != nil {
		return "", failf("Error: %v", err)
	}
	return full, nil
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Local().Format("2006-01-02 15:04")
}

func newSessionsListCmd(app *App) *cobra.Command {
	var (
		asJSON bool
		limit  int
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List sessions, most recent first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, err := app.openSessions(ctx, true)
			if err != nil {
				return err
			}
			list := []session.Session{}
			if s != nil {
				defer s.Close()
				if list, err = s.List(ctx, limit); err != nil {
					return failf("Error: %v", err)
				}
			}
			if asJSON {
				return writeJSON(app.IO.Out, list)
			}
			if len(list) == 0 {
				fmt.Fprintln(app.IO.Out, "No sessions yet. Start one with: hermes chat")
				return nil
			}
			t := &table{color: app.Color()}
			t.header("ID", "Title", "Model", "Messages", "Updated")
			for _, x := range list {
				title := x.Title
				if title == "" && x.Preview != "" {
					title = strconv.Quote(truncate(x.Preview, 40))
				}
				t.row(x.ID, truncate(title, 50), x.Model, strconv.Itoa(x.MessageCount), formatTime(x.UpdatedAt))
			}
			t.write(app.IO.Out)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "machine-readable output")
	cmd.Flags().IntVarP(&limit, "limit", "n", 50, "show at most `N` sessions (0: all)")
	return cmd
}

// maxShown caps one message's text in `sessions show` (a huge tool output would
// bury the conversation); --json always has everything.
const maxShown = 2000

func newSessionsShowCmd(app *App) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Print a session's conversation (an id prefix is enough when only one session has it)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, err := app.openSessions(ctx, true)
			if err != nil {
				return err
			}
			if s != nil {
				defer s.Close()
			}
			id, err := resolveSession(ctx, s, args[0])
			if err != nil {
				return err
			}
			sess, err := s.Get(ctx, id)
			if err != nil {
				return failf("Error: %v", err)
			}
			msgs, err := s.History(ctx, id)
			if err != nil {
				return failf("Error: %v", err)
			}
			calls, err := s.ToolCalls(ctx, id)
			if err != nil {
				return failf("Error: %v", err)
			}
			if asJSON {
				if msgs == nil {
					msgs = []session.Message{}
				}
				if calls == nil {
					calls = []session.ToolCall{}
				}
				return writeJSON(app.IO.Out, map[string]any{"session": sess, "messages": msgs, "tool_calls": calls})
			}
			printSession(app, sess, msgs, calls)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "machine-readable output (the session, every message and tool call)")
	return cmd
}

func printSession(app *App, sess session.Session, msgs []session.Message, calls []session.ToolCall) {
	w := app.IO.Out
	head := []string{"Session " + sess.ID}
	if sess.Model != "" {
		head = append(head, "model "+sess.Model)
	}
	if sess.Source != "" {
		head = append(head, "source "+sess.Source)
	}
	head = append(head, fmt.Sprintf("%d messages", sess.MessageCount))
	fmt.Fprintln(w, strings.Join(head, " · "))
	if sess.Title != "" {
		fmt.Fprintln(w, "Title: "+sess.Title)
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
		var lines []string
		if text != "" {
			lines = strings.Split(text, "\n")
		}
		for _, tc := range m.ToolCalls {
			lines = append(lines, "→ "+tc.Function.Name+" "+truncate(tc.Function.Arguments, 200))
		}
		if len(lines) == 0 {
			lines = []string{""}
		}
		fmt.Fprintf(w, "[%s] %s\n", tag, lines[0])
		for _, l := range lines[1:] {
			fmt.Fprintln(w, "  "+l)
		}
	}
}

func newSessionsSearchCmd(app *App) *cobra.Command {
	var (
		asJSON bool
		limit  int
	)
	cmd := &cobra.Command{
		Use:   "search TERM...",
		Short: "Find messages containing every word of TERM (full-text, case-insensitive)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			term := strings.Join(args, " ")
			if strings.TrimSpace(term) == "" {
				return &exitCodeError{code: exitUsage, msg: "Error: search needs a word to look for"}
			}
			s, err := app.openSessions(ctx, true)
			if err != nil {
				return err
			}
			hits := []session.Hit{}
			if s != nil {
				defer s.Close()
				if hits, err = s.Search(ctx, term, limit); err != nil {
					return failf("Error: %v", err)
				}
			}
			if asJSON {
				return writeJSON(app.IO.Out, hits)
			}
			if len(hits) == 0 {
				fmt.Fprintf(app.IO.Out, "No messages match %q.\n", term)
				return nil
			}
			t := &table{color: app.Color()}
			t.header("Session", "#", "Role", "Match")
			for _, h := range hits {
				t.row(h.SessionID, strconv.Itoa(h.Seq), h.Role, truncate(h.Snippet, 90))
			}
			t.write(app.IO.Out)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "machine-readable output")
	cmd.Flags().IntVarP(&limit, "limit", "n", 50, "show at most `N` matches")
	return cmd
}

func newSessionsDeleteCmd(app *App) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "delete ID",
		Short: "Delete a session with its messages and tool calls",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, err := app.openSessions(ctx, true)
			if err != nil {
				return err
			}
			if s != nil {
				defer s.Close()
			}
			// Deleting takes the full id: a prefix is fine for reading, not for this.
			if s == nil {
				return noSession(args[0])
			}
			sess, err := s.Get(ctx, args[0])
			if errors.Is(err, session.ErrNotFound) {
				return noSession(args[0])
			}
			if err != nil {
				return failf("Error: %v", err)
			}
			if err := s.Delete(ctx, sess.ID); err != nil {
				return failf("Error: %v", err)
			}
			if asJSON {
				return writeJSON(app.IO.Out, map[string]any{"deleted": sess.ID, "messages": sess.MessageCount})
			}
			fmt.Fprintf(app.IO.Out, "Deleted session %s (%d messages).\n", sess.ID, sess.MessageCount)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "machine-readable output")
	return cmd
}
