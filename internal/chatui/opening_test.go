package chatui

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hermes-go/hermes/internal/agent"
)

// The prompt is up before the chat is open: what is sent meanwhile waits
// and runs once it is, after the banner that names the session.
func TestMessageBeforeTheChatOpensWaits(t *testing.T) {
	c := newChat()
	c.turn = func(context.Context, string) (*agent.Turn, error) {
		return &agent.Turn{Final: "answer", Streamed: false}, nil
	}
	opened := make(chan openedMsg, 1)
	h := newHarnessWith(t, c, harnessOpts{opening: opened})
	if v := h.view(); !strings.Contains(v, "starting…") || strings.Contains(v, "fake-model") {
		t.Fatalf("before the chat opens the status line should say starting…:\n%s", v)
	}
	h.typ("early")
	h.key("enter")
	h.until("queued the message", h.shows("(queued: early)"))
	h.typ("/usage")
	h.key("enter")
	h.until("queued the command", h.shows("(queued: /usage)"))
	if len(h.cmds) != 0 {
		t.Fatalf("a command ran before the chat was open: %q", h.cmds)
	}
	c.mu.Lock()
	if len(c.inputs) != 0 {
		t.Fatalf("the chat ran %q before it was open", c.inputs)
	}
	c.mu.Unlock()

	opened <- openedMsg{chat: c, snap: firstSnapshot(context.Background(), c)}
	h.until("ran the queued commands", func() bool { return h.idle() && len(h.cmds) == 1 && strings.Contains(h.printed(), "answer") })
	c.mu.Lock()
	inputs := c.inputs
	c.mu.Unlock()
	if len(inputs) != 1 || inputs[0] != "early" {
		t.Fatalf("the chat got %q, want the queued message", inputs)
	}
	p := h.printed()
	banner := strings.Index(p, "hermes chat · fake-model · session s1")
	if banner < 0 || banner > strings.Index(p, "› early") {
		t.Errorf("the banner should come once the chat is open, before the queued message:\n%s", p)
	}
	if v := h.view(); !strings.Contains(v, "fake-model (custom) · session s1") {
		t.Errorf("the status line lacks the session once open:\n%s", v)
	}
}

// A chat that fails to open ends the screen with its error.
func TestChatThatFailsToOpenQuits(t *testing.T) {
	opened := make(chan openedMsg, 1)
	h := newHarnessWith(t, newChat(), harnessOpts{opening: opened})
	boom := errors.New("no such session")
	opened <- openedMsg{err: boom}
	h.until("quit", func() bool { return h.quit })
	if !errors.Is(h.m.openErr, boom) {
		t.Errorf("openErr = %v, want %v", h.m.openErr, boom)
	}
}
