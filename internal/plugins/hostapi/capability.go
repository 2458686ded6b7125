package hostapi

import (
	"context"

	"github.com/hermes-go/hermes/internal/capability"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// ctx.has_capability and ctx.has_plugin.

func hasCapability(_ context.Context, s *Session, np protocol.NameParams) (any, error) {
	return s.HasCapability(np.Name), nil
}

func hasPlugin(_ context.Context, s *Session, np protocol.NameParams) (any, error) {
	return np.Name != s.p.ID() && s.h.opts.Plugins.HasPlugin(np.Name), nil
}

// overrideAllowed: bundled plugins are trusted for tools.override; others need the
// capability granted (or the legacy allow_tool_override key). Unreadable config denies.
func (s *Session) overrideAllowed() bool {
	if s.p.Bundled() {
		return true
	}
	return s.capabilityGranted("tools.override")
}

// HasCapability answers ctx.has_capability, reading config fresh each time.
func (s *Session) HasCapability(id string) bool {
	if id == "tools.override" && s.p.Bundled() {
		return true
	}
	return s.capabilityGranted(id)
}

func (s *Session) capabilityGranted(id string) bool {
	pluginID := s.p.ID()
	doc, err := s.h.config.Load()
	if err != nil {
		s.h.log.Info("capability_check", "plugin", pluginID, "capability", id, "decision", "deny", "evidence", "config unreadable")
		return false
	}
	ok, evidence := capability.Granted(doc.Map(), pluginID, id)
	decision := "deny"
	if ok {
		decision = "allow"
	}
	s.h.log.Info("capability_check", "plugin", pluginID, "capability", id, "decision", decision, "evidence", evidence)
	return ok
}
