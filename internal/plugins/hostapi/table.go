package hostapi

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/hermes-go/hermes/pkg/protocol"
)

// method is one row of the table: how a protocol method is served.
type method struct {
	serve func(ctx context.Context, s *Session, params json.RawMessage) (any, error)
	// registers: the call adds to what the plugin registered, so it is recorded
	// to tell whether a restarted process registers the same (registry.SameAsCommitted).
	registers bool
}

// methods is every ctx call-back a plugin can make. Adding a facade is a file
// with its handlers and a row here.
var methods = map[string]method{
	protocol.MethodLog: {serve: lenient(logRecord)},

	protocol.MethodRegisterTool:       {serve: typed(registerTool), registers: true},
	protocol.MethodRegisterHook:       {serve: typed(registerHook), registers: true},
	protocol.MethodRegisterCommand:    {serve: typed(registerCommand), registers: true},
	protocol.MethodRegisterCLICommand: {serve: typed(registerCLICommand), registers: true},
	protocol.MethodRegisterSkill:      {serve: typed(registerSkill), registers: true},
	protocol.MethodRegisterMiddleware: {serve: typed(registerMiddleware), registers: true},
	protocol.MethodRegisterOther:      {serve: typed(registerOther), registers: true},
	protocol.MethodSubscribe:          {serve: typed(subscribe), registers: true},
	protocol.MethodDispose:            {serve: typed(dispose), registers: true},

	protocol.MethodGetConfig: {serve: typed(getConfig)},
	protocol.MethodSetConfig: {serve: exact(setConfig)},
	protocol.MethodStateGet:  {serve: typed(stateGet)},
	protocol.MethodStateSet:  {serve: exact(stateSet)},

	protocol.MethodHasPlugin:      {serve: typed(hasPlugin)},
	protocol.MethodHasCapability:  {serve: typed(hasCapability)},
	protocol.MethodDispatchTool:   {serve: typed(dispatchTool)},
	protocol.MethodCLIStdin:       {serve: optional(cliStdinRead)},
	protocol.MethodEmit:           {serve: typed(emit)},
	protocol.MethodFacade:         {serve: typed(facade)},
	protocol.MethodMiddlewareNext: {serve: typed(middlewareNext)},
	protocol.MethodPlatformEvent:  {serve: typed(platformEvent)},
	protocol.MethodPlatformStatus: {serve: lenient(platformStatus)},
}

// Handler serves the plugin's ctx calls on its protocol connection.
func (s *Session) Handler() protocol.Handler {
	return func(ctx context.Context, name string, params json.RawMessage) (any, error) {
		m, ok := methods[name]
		if !ok {
			return nil, protocol.Errorf(protocol.CodeMethodNotFound, "hermes host has no method %q", name)
		}
		if m.registers {
			s.h.reg.RecordWire(s.p.ID(), name, params)
		}
		return m.serve(ctx, s, params)
	}
}

// typed decodes the parameters into P, answering invalid ones with CodeInvalidParams.
func typed[P any](f func(ctx context.Context, s *Session, p P) (any, error)) func(context.Context, *Session, json.RawMessage) (any, error) {
	return func(ctx context.Context, s *Session, raw json.RawMessage) (any, error) {
		var p P
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, invalidParams(err)
		}
		return f(ctx, s, p)
	}
}

// exact is typed, keeping numbers as the plugin wrote them (json.Number): an
// integer stays an integer (set_config(5) must write 5, not 5.0, into
// config.yaml) and large integers keep every digit.
func exact[P any](f func(ctx context.Context, s *Session, p P) (any, error)) func(context.Context, *Session, json.RawMessage) (any, error) {
	return func(ctx context.Context, s *Session, raw json.RawMessage) (any, error) {
		var p P
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&p); err != nil {
			return nil, invalidParams(err)
		}
		return f(ctx, s, p)
	}
}

// optional is typed for a method whose parameters may be left out.
func optional[P any](f func(ctx context.Context, s *Session, p P) (any, error)) func(context.Context, *Session, json.RawMessage) (any, error) {
	decode := typed(f)
	return func(ctx context.Context, s *Session, raw json.RawMessage) (any, error) {
		if len(raw) == 0 || string(raw) == "null" {
			var p P
			return f(ctx, s, p)
		}
		return decode(ctx, s, raw)
	}
}

// lenient is for notifications: undecodable parameters are ignored, as there is
// nobody to answer.
func lenient[P any](f func(ctx context.Context, s *Session, p P) (any, error)) func(context.Context, *Session, json.RawMessage) (any, error) {
	return func(ctx context.Context, s *Session, raw json.RawMessage) (any, error) {
		var p P
		if json.Unmarshal(raw, &p) != nil {
			return nil, nil
		}
		return f(ctx, s, p)
	}
}

func invalidParams(err error) error {
	return protocol.Errorf(protocol.CodeInvalidParams, "invalid parameters: %v", err)
}
