package hostapi

import (
	"context"

	"github.com/hermes-go/hermes/internal/lazyre"
	"github.com/hermes-go/hermes/internal/plugins/registry"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// register_memory_provider: the provider object stays in the plugin's process;
// the agent's memory manager calls it through the recorded connection
// (protocol memory.* methods) when memory.provider selects the plugin.

var memoryNameRE = lazyre.New(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

func registerMemoryProvider(_ context.Context, s *Session, rp protocol.RegisterOtherParams) (any, error) {
	if !memoryNameRE.MatchString(rp.Name) {
		return nil, protocol.Errorf(protocol.CodeInvalidArgument,
			"register_memory_provider: the provider's name %q must be 1-64 letters, digits, '_', '-' or '.' (memory.provider names it)", rp.Name)
	}
	key := s.p.ID()
	s.h.reg.AddProvider(key, registry.Other{Registrar: rp.Registrar, Name: rp.Name, Note: "active when memory.provider selects it"},
		registry.Provider{Kind: registry.MemoryProvider, Name: rp.Name, Conn: pluginConn{s.p}})
	return protocol.RegisterResult{Registered: true}, nil
}
