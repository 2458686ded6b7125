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

// register_context_engine: the engine stays in the plugin's process; the
// agent reaches it through a proxy (app.pluginEngine) when context.engine
// names it. Upstream allows one per manager: a second plugin's is refused.

var engineNameRE = lazyre.New(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// BuiltinContextEngine is the name of hermes' own engine, which no plugin may take.
const BuiltinContextEngine = "compressor"

func registerContextEngine(_ context.Context, s *Session, rp protocol.RegisterOtherParams) (any, error) {
	return addContextEngine(s, rp, engineConn{s.p})
}

// addContextEngine checks and records one engine, of a plugin process or a
// compiled-in plugin.
func addContextEngine(s *Session, rp protocol.RegisterOtherParams, conn registry.PlatformConn) (any, error) {
	key := s.p.ID()
	if !engineNameRE.MatchString(rp.Name) {
		return nil, protocol.Errorf(protocol.CodeInvalidArgument,
			"register_context_engine: the engine's name %q must be 1-64 letters, digits, '_', '-' or '.' (it is what context.engine selects)", rp.Name)
	}
	if rp.Name == BuiltinContextEngine {
		s.p.Warnf("plugin %s: context engine name '%s' is hermes' built-in compressor; the plugin's engine is ignored (give it another name)", key, rp.Name)
		return protocol.RegisterResult{Registered: false, Warning: "conflicts with the built-in context engine"}, nil
	}
	note := fmt.Sprintf("selected by context.engine: %s", rp.Name)
	holder, ok := s.h.reg.AddExclusiveProvider(key, registry.Other{Registrar: rp.Registrar, Name: rp.Name, Note: note},
		registry.Provider{Kind: registry.ContextEngine, Name: rp.Name, Plugin: key, Handle: rp.Handle, Details: rp.Details,
			Conn: conn})
	if !ok {
		s.p.Warnf("plugin %s: Only one context engine plugin is allowed; plugin %s registered one first, so '%s' is ignored (disable one of them)",
			key, holder, rp.Name)
		return protocol.RegisterResult{Registered: false, Warning: "Only one context engine plugin is allowed."}, nil
	}
	return protocol.RegisterResult{Registered: true}, nil
}

// engineConn is an engine's way into its plugin's current process; a
// failure comes back as the plugin's exception ("ValueError: ...").
type engineConn struct{ p Caller }

func (c engineConn) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	raw, err := c.p.Call(ctx, method, params)
	if err != nil {
		pe := asPluginError(err)
		return nil, fmt.Errorf("%s: %s", pe.typ, pe.msg)
	}
	return raw, nil
}

func (c engineConn) Exited() <-chan struct{} { return pluginConn(c).Exited() }

// RegisterContextEngine of a compiled-in plugin: the engine is called in this
// process through the same context_engine.call shapes.
func (c *localContext) RegisterContextEngine(e pluginsdk.ContextEngine) error {
	if e == nil {
		return errors.New("RegisterContextEngine: engine is nil")
	}
	rp := protocol.RegisterOtherParams{Registrar: "register_context_engine", Name: e.Name()}
	return asGoErr(addContextEngine(c.s, rp, localEngine{e}))
}

// localEngine is a compiled-in engine behind the registry's connection interface.
type localEngine struct{ e pluginsdk.ContextEngine }

func (l localEngine) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	cp, ok := params.(protocol.ContextEngineCallParams)
	if !ok {
		return nil, fmt.Errorf("context engine call %s: unexpected params %T", method, params)
	}
	args, err := viaJSON(cp.Kwargs)
	if err != nil {
		return nil, err
	}
	out, err := pluginsdk.ServeContextEngine(ctx, l.e, cp.Method, args)
	if err != nil {
		return nil, err
	}
	return json.Marshal(out)
}

func (l localEngine) Exited() <-chan struct{} { return make(chan struct{}) }
