package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hermes-go/hermes/internal/app"
	"github.com/hermes-go/hermes/internal/termsafe"
)

// recapTurns is how many of a resumed session's last exchanges are shown.
const recapTurns = 3

// sessionCommand runs the built-in commands about the session itself.
func (cs *chatSession) sessionCommand(ctx context.Context, name, args string) {
	out, errw := cs.io.Out, cs.io.Err
	fail := func(err error) {
		sayf(errw, "/%s failed: %s\n", name, termsafe.Text(cs.chat.Redact(err.Error())))
	}
	switch name {
	case "usage":
		turns, err := cs.chat.Usage(ctx)
		if err != nil {
			fail(err)
			return
		}
		sayf(out, "Model: %s (%s) · session %s\n", cs.chat.Model(), cs.chat.Provider(), cs.chat.SessionID())
		writeUsage(out, turns, cs.chat.ContextLength())
	case "undo", "retry":
		text, err := cs.chat.Undo(ctx)
		switch {
		case errors.Is(err, app.ErrNothingToUndo):
			sayf(errw, "Nothing to %s: no message has been sent in this session yet.\n", name)
			return
		case err != nil:
			fail(err)
			return
		}
		if name == "undo" {
			sayf(errw, "Dropped the last exchange: %s\n", truncate(oneLine(text), 70))
			return
		}
		sayf(errw, "Retrying: %s\n", truncate(oneLine(text), 70))
		cs.retry = text
	case "title":
		title, err := cs.chat.SetTitle(ctx, args)
		switch {
		case err != nil:
			fail(err)
		case args != "":
			sayf(out, "Title set: %s\n", title)
		case title == "":
			fmt.Fprintln(out, "This session has no title yet; /title TEXT sets one.")
		default:
			sayf(out, "Title: %s\n", title)
		}
	case "model":
		if args == "" {
			sayf(out, "Model: %s (%s); /model [provider:]model switches it for this session.\n", cs.chat.Model(), cs.chat.Provider())
			return
		}
		if err := cs.chat.SwitchModel(ctx, args); err != nil {
			fail(err)
			return
		}
		sayf(errw, "Model switched to %s (%s) for this session.\n", cs.chat.Model(), cs.chat.Provider())
	case "resume":
		if args == "" {
			fmt.Fprintln(errw, "Name the session: /resume ID (/sessions lists them).")
			return
		}
		if _, err := cs.chat.Resume(ctx, args); err != nil {
			fail(err)
			return
		}
		cs.recap()
	case "sessions":
		list, err := cs.chat.RecentSessions(ctx, 10)
		if err != nil {
			fail(err)
			return
		}
		for _, s := range list {
			mark := " "
			if s.ID == cs.chat.SessionID() {
				mark = "*"
			}
			label := s.Title
			if label == "" {
				label = s.Preview
			}
			sayf(out, "%s %-24s %-16s %3d msgs  %s\n", mark, s.ID, s.UpdatedAt.Local().Format("2006-01-02 15:04"), s.MessageCount, truncate(oneLine(label), 50))
		}
		fmt.Fprintln(out, "Continue one with: hermes chat --resume ID")
	}
}

// recap shows the last exchanges of a resumed session, so the user knows
// where it stopped.
func (cs *chatSession) recap() {
	msgs := cs.chat.History()
	start := len(msgs)
	for n := 0; start > 0 && n < recapTurns; {
		start--
		if msgs[start].Role == "user" {
			n++
		}
	}
	var lines []string
	for _, m := range msgs[start:] {
		switch {
		case m.Role == "user":
			lines = append(lines, "  you:    "+cs.chat.Redact(recapText(m.Content)))
		case m.Role == "assistant" && m.Content != "":
			lines = append(lines, "  hermes: "+cs.chat.Redact(recapText(m.Content)))
		case m.Role == "assistant":
			var names []string
			for _, c := range m.ToolCalls {
				names = append(names, c.Function.Name)
			}
			lines = append(lines, "  hermes: ⚙ "+strings.Join(names, ", "))
		}
	}
	if len(lines) == 0 {
		sayf(cs.io.Err, "Resumed session %s (nothing said yet).\n", cs.chat.SessionID())
		return
	}
	sayf(cs.io.Err, "Resumed session %s; where it stopped:\n", cs.chat.SessionID())
	for _, l := range lines {
		sayf(cs.io.Err, "%s\n", l)
	}
}

func recapText(content string) string {
	text, _, _ := strings.Cut(content, "\n\n--- ") // not the attached context
	return truncate(oneLine(text), 100)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
