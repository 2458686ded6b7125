package hostapi

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hermes-go/hermes/internal/lazyre"
	"github.com/hermes-go/hermes/internal/plugins/registry"
	"github.com/hermes-go/hermes/pkg/protocol"
)

var transportName = lazyre.New(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// registerApprovalTransport serves ctx.register_approval_transport(name,
// present_fn) with upstream's checks (the SDKs check the same before they
// send; a plugin speaking the protocol itself is checked here).
func registerApprovalTransport(_ context.Context, s *Session, rp protocol.RegisterOtherParams) (any, error) {
	name := strings.ToLower(strings.TrimSpace(rp.Name))
	switch {
	case name == "builtin":
		return nil, protocol.Errorf(protocol.CodeInvalidArgument, "approval transport name 'builtin' is reserved")
	case !transportName.MatchString(name):
		return nil, protocol.Errorf(protocol.CodeInvalidArgument, "approval transport name %q must match [a-z0-9][a-z0-9_-]{0,63}", rp.Name)
	case rp.Handle == "":
		return nil, protocol.Errorf(protocol.CodeTypeError, "approval transport present_fn must be callable")
	}
	if owner := s.h.reg.ApprovalTransportOwner(name); owner != "" {
		return nil, protocol.Errorf(protocol.CodeInvalidArgument, "approval transport '%s' is already registered by '%s'", name, owner)
	}
	key := s.p.ID()
	s.h.reg.AddApprovalTransport(key, &registry.TransportEntry{Name: name, Plugin: key, Present: s.remoteApprovalPresent(rp.Handle)},
		registry.Other{Registrar: "register_approval_transport", Name: name, Note: "asked for approvals when security.approval.transport selects it"})
	return protocol.RegisterResult{Registered: true}, nil
}

func (s *Session) remoteApprovalPresent(handle string) func(context.Context, protocol.ApprovalRequest) (protocol.ApprovalDecision, error) {
	return func(ctx context.Context, req protocol.ApprovalRequest) (protocol.ApprovalDecision, error) {
		raw, err := s.p.Call(ctx, protocol.MethodApprovalPresent, protocol.ApprovalPresentParams{Handle: handle, Request: req})
		if err != nil {
			return protocol.ApprovalDecision{}, asPluginError(err)
		}
		var d protocol.ApprovalDecision
		if err := json.Unmarshal(raw, &d); err != nil {
			return protocol.ApprovalDecision{Invalid: fmt.Sprintf("an answer that is not a decision (%v)", err)}, nil
		}
		return d, nil
	}
}
