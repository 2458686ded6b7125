package agent

import (
	"context"
	"strings"

	"github.com/hermes-go/hermes/internal/llm"
)

type steeringKey struct{}

// WithSteering gives a turn run under ctx a source of steering messages:
// text the user sent while the turn ran (display.busy_input_mode: steer).
// take returns what arrived since it was last called, and nothing more.
func WithSteering(ctx context.Context, take func() []string) context.Context {
	if take == nil {
		return ctx
	}
	return context.WithValue(ctx, steeringKey{}, take)
}

// steer adds what the user sent mid-turn as a user message at the tool
// boundary, so the model's next call sees it. The history stays valid: a
// user message may follow tool results. Text arriving after the last tool
// boundary is the caller's to run as the next turn.
func (a *Agent) steer(ctx context.Context, s *Session, t *Turn) {
	take, _ := ctx.Value(steeringKey{}).(func() []string)
	if take == nil {
		return
	}
	texts := take()
	if len(texts) == 0 {
		return
	}
	a.add(context.WithoutCancel(ctx), s, t, llm.Message{Role: "user", Content: strings.Join(texts, "\n\n")})
}
