package app

import (
	"context"
	"sync"
	"time"

	"github.com/hermes-go/hermes/internal/approval"
	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/gateway"
	"github.com/hermes-go/hermes/internal/gateway/platform"
	"github.com/hermes-go/hermes/internal/termsafe"
	"github.com/hermes-go/hermes/internal/tools"
)

// gatewayApprovals asks for approvals in the conversation whose turn needs
// them. Each session key has its own approval.Approver, so "approve for this
// session" holds for that conversation only; the turn's key comes in ctx.
type gatewayApprovals struct {
	store   *config.Store
	timeout time.Duration
	redact  func(string) string
	route   *approval.TransportRoute // security.approval.transport

	mu     sync.Mutex
	hooks  approval.Firer
	runner *gateway.Runner
	byKey  map[string]*approval.Approver
}

var (
	_ tools.Approver           = (*gatewayApprovals)(nil)
	_ approval.CommandApprover = (*gatewayApprovals)(nil)
)

type gatewayTurnKey struct{}

type gatewayTurn struct {
	key string
	src platform.Source
}

// withGatewayTurn marks ctx as a turn of the gateway session key.
func withGatewayTurn(ctx context.Context, key string, src platform.Source) context.Context {
	return context.WithValue(ctx, gatewayTurnKey{}, gatewayTurn{key, src})
}

func (g *gatewayApprovals) set(h approval.Firer, r *gateway.Runner) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.hooks, g.runner = h, r
}

// approver is the approver of ctx's session; a call outside a gateway turn
// (nobody to ask) gets one without a prompter, which denies.
func (g *gatewayApprovals) approver(ctx context.Context) *approval.Approver {
	turn, _ := ctx.Value(gatewayTurnKey{}).(gatewayTurn)
	g.mu.Lock()
	defer g.mu.Unlock()
	if a, ok := g.byKey[turn.key]; ok {
		a.Prompter = g.prompter(turn)
		return a
	}
	a := &approval.Approver{Store: g.store, Hooks: g.hooks, SessionKey: turn.key, Surface: "gateway", Timeout: g.timeout, Transport: g.route}
	if turn.key != "" {
		a.Prompter = g.prompter(turn)
		g.byKey[turn.key] = a
	}
	return a
}

func (g *gatewayApprovals) prompter(turn gatewayTurn) approval.Prompter {
	if g.runner == nil {
		return nil
	}
	return chatPrompter{g: g, runner: g.runner, turn: turn}
}

func (g *gatewayApprovals) Approve(ctx context.Context, req tools.ApprovalRequest) (tools.ApprovalChoice, error) {
	return g.approver(ctx).Approve(ctx, req)
}

func (g *gatewayApprovals) ApproveCommand(ctx context.Context, req approval.CommandRequest) (approval.Choice, error) {
	return g.approver(ctx).ApproveCommand(ctx, req)
}

// chatPrompter asks in the turn's chat.
type chatPrompter struct {
	g      *gatewayApprovals
	runner *gateway.Runner
	turn   gatewayTurn
}

func (p chatPrompter) Prompt(ctx context.Context, pr approval.Prompt) (approval.Choice, error) {
	// The command is shown as it is, with control and bidi characters made
	// visible and secrets masked: the user approves what will run.
	q := gateway.Question{Command: termsafe.Text(p.g.redact(pr.Command)), Description: termsafe.Line(pr.Description),
		OfferAlways: !pr.Origin.ByPlugin()}
	choice, err := p.runner.Ask(ctx, p.turn.key, p.turn.src, q)
	return approval.Choice(choice), err
}
