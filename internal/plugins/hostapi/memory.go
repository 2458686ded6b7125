package hostapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hermes-go/hermes/internal/lazyre"
	"github.com/hermes-go/hermes/internal/plugins/registry"
	"github.com/hermes-go/hermes/pkg/pluginsdk"
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
		registry.Provider{Kind: registry.MemoryProvider, Name: rp.Name, Details: rp.Details, Conn: pluginConn{s.p}})
	return protocol.RegisterResult{Registered: true}, nil
}

// RegisterMemoryProvider of a compiled-in plugin: the provider is called in
// this process through the same memory.* methods (pluginsdk.ServeMemory).
func (c *localContext) RegisterMemoryProvider(p pluginsdk.MemoryProvider) error {
	if p == nil {
		return errors.New("RegisterMemoryProvider: provider is nil")
	}
	rp := protocol.RegisterOtherParams{Registrar: "register_memory_provider", Name: p.Name()}
	if !memoryNameRE.MatchString(rp.Name) {
		return fmt.Errorf("RegisterMemoryProvider: name %q must be 1-64 letters, digits, '_', '-' or '.'", rp.Name)
	}
	c.s.h.reg.AddProvider(c.s.p.ID(), registry.Other{Registrar: rp.Registrar, Name: rp.Name, Note: "active when memory.provider selects it"},
		registry.Provider{Kind: registry.MemoryProvider, Name: rp.Name, Conn: localMemory{p}})
	return nil
}

// localMemory is a compiled-in provider behind the registry's connection interface.
type localMemory struct{ p pluginsdk.MemoryProvider }

func (l localMemory) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	mp, ok := params.(protocol.MemoryParams)
	if !ok {
		return nil, fmt.Errorf("memory call %s: unexpected params %T", method, params)
	}
	// Through JSON, as over the protocol: the provider sees the same values.
	b, err := json.Marshal(mp.Args)
	if err != nil {
		return nil, err
	}
	var args map[string]any
	_ = json.Unmarshal(b, &args)
	out, err := pluginsdk.ServeMemory(ctx, l.p, method, args)
	if err != nil {
		return nil, err
	}
	return json.Marshal(out)
}

func (l localMemory) Exited() <-chan struct{} { return make(chan struct{}) }
