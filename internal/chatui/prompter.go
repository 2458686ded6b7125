package chatui

import (
	"context"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/hermes-go/hermes/internal/approval"
	"github.com/hermes-go/hermes/internal/chatui/toolview"
)

// Prompter is the approval.Prompter of the screen: the request becomes the
// modal, the user's pick the answer. The request's ctx still bounds the wait
// (the approval timeout, the turn's interruption): when it ends the modal goes.
type Prompter struct {
	send func(tea.Msg)
	// Redact masks secrets in the command and description shown.
	Redact func(string) string
}

var _ approval.Prompter = (*Prompter)(nil)

// approvalReq is one request on the screen.
type approvalReq struct {
	p       approval.Prompt
	choices []approval.Choice
	sel     int
	answer  chan approval.Choice // buffered: the model never blocks on it
}

type (
	approvalMsg     struct{ req *approvalReq }
	approvalGoneMsg struct{ req *approvalReq }
)

// Prompt shows the modal and waits for the pick or ctx.
func (p *Prompter) Prompt(ctx context.Context, pr approval.Prompt) (approval.Choice, error) {
	if p.Redact != nil {
		pr.Command, pr.Description = p.Redact(pr.Command), p.Redact(pr.Description)
	}
	req := &approvalReq{p: pr, answer: make(chan approval.Choice, 1)}
	for _, c := range toolview.Choices(pr.Origin.ByPlugin()) { // a plugin's request is not offered "always"
		req.choices = append(req.choices, approval.Choice(c))
	}
	p.send(approvalMsg{req})
	select {
	case c := <-req.answer:
		return c, nil
	case <-ctx.Done():
		p.send(approvalGoneMsg{req})
		return approval.ChoiceDeny, ctx.Err()
	}
}

func (m *Model) approvalKey(k tea.KeyPressMsg) tea.Cmd {
	r := m.appr
	switch k.String() {
	case "left", "up", "shift+tab":
		r.sel = (r.sel - 1 + len(r.choices)) % len(r.choices)
		return nil
	case "right", "down", "tab":
		r.sel = (r.sel + 1) % len(r.choices)
		return nil
	case "enter":
		return m.answer(r.choices[r.sel])
	case "esc", "ctrl+c":
		return m.answer(approval.ChoiceDeny)
	}
	for _, c := range r.choices {
		if strings.EqualFold(k.Text, string(c)[:1]) {
			return m.answer(c)
		}
	}
	return nil
}

// answer closes the modal with c.
func (m *Model) answer(c approval.Choice) tea.Cmd {
	r := m.appr
	m.appr = nil
	r.answer <- c
	m.print(style(m.o.Color, styleDim, "  approval: "+string(c)))
	return nil
}

func (m *Model) approvalView() string {
	r := m.appr
	names := make([]string, len(r.choices))
	for i, c := range r.choices {
		names[i] = string(c)
	}
	return toolview.ApprovalModal(toolview.Approval{Command: r.p.Command, Description: r.p.Description, Origin: r.p.Origin.String(),
		Choices: names, Selected: r.sel, Hint: "←/→ and Enter, or " + letters(names) + " · Esc denies"}, m.width, m.o.Color)
}

// letters are the shortcut keys of the choices: "o/s/a/d".
func letters(names []string) string {
	l := make([]string, len(names))
	for i, n := range names {
		l[i] = n[:1]
	}
	return strings.Join(l, "/")
}
