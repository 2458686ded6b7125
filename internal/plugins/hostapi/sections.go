package hostapi

import (
	"context"

	"github.com/hermes-go/hermes/internal/plugins/registry"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// register_system_prompt_section (upstream §11.2), which the bridge sends as a
// register_other.

// validPromptSectionID is ^[a-z0-9][a-z0-9._-]{0,127}$ without a regexp: Go
// compiles a counted repeat into that many copies, ~2 ms at every start-up.
func validPromptSectionID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case i > 0 && (c == '.' || c == '_' || c == '-'):
		default:
			return false
		}
	}
	return true
}

func registerPromptSection(_ context.Context, s *Session, rp protocol.RegisterOtherParams) (any, error) {
	id, _ := rp.Details["id"].(string)
	if !validPromptSectionID(id) {
		return nil, protocol.Errorf(protocol.CodeInvalidArgument, "system prompt section id must be 1-128 lowercase characters using letters, numbers, '.', '_', or '-'")
	}
	maxChars := 4000
	if f, ok := rp.Details["max_chars"].(float64); ok {
		maxChars = int(f)
	}
	if owner := s.h.reg.PromptSectionOwner(id); owner != "" {
		return nil, protocol.Errorf(protocol.CodeInvalidArgument, "system prompt section %q is already registered by plugin %s", id, owner)
	}
	sec := &registry.PromptSection{ID: id, Plugin: s.p.ID(), MaxChars: maxChars}
	if str, ok := rp.Details["content"].(string); ok {
		sec.Content = str
	}
	if rp.Handle != "" {
		sec.Render = s.remotePromptSection(rp.Handle)
	}
	s.h.reg.AddPromptSection(s.p.ID(), sec, rp.Registrar, "system prompt section")
	return protocol.RegisterResult{Registered: true}, nil
}
