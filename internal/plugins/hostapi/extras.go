package hostapi

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hermes-go/hermes/internal/plugins/registry"
	"github.com/hermes-go/hermes/internal/redact"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// register_redaction_patterns, register_context_reference and
// register_auxiliary_task, which the bridge sends as register_other.

// registerRedactionPatterns keeps the patterns that pass redact.Check and
// answers how many; it never fails the plugin (upstream never raises): each
// refused pattern is a warning saying why.
func registerRedactionPatterns(_ context.Context, s *Session, rp protocol.RegisterOtherParams) (any, error) {
	key := s.p.ID()
	list, _ := rp.Details["patterns"].([]any)
	if len(list) > redact.MaxPatternsPerCall {
		s.p.Warnf("plugin %s: register_redaction_patterns got %d patterns; only the first %d are considered", key, len(list), redact.MaxPatternsPerCall)
		list = list[:redact.MaxPatternsPerCall]
	}
	var accepted []string
	seen := map[string]bool{}
	for _, v := range list {
		p, ok := v.(string)
		if !ok {
			s.p.Warnf("plugin %s: skipping a redaction pattern that is not a string", key)
			continue
		}
		p = strings.TrimSpace(p)
		if err := redact.Check(p); err != nil {
			s.p.Warnf("plugin %s: skipping redaction pattern %q: %v", key, p, err)
			continue
		}
		if seen[p] {
			continue
		}
		seen[p] = true
		accepted = append(accepted, p)
	}
	if len(accepted) > 0 {
		s.h.reg.AddRedactionPatterns(key, accepted, registry.Other{Registrar: rp.Registrar,
			Name: fmt.Sprintf("%d pattern(s)", len(accepted)), Note: "redacts logs, tool results, approval text and errors"})
	}
	return map[string]int{"accepted": len(accepted)}, nil
}

// builtinRefPrefixes are upstream's own @ references (agent/context_references.py).
var builtinRefPrefixes = map[string]bool{"diff": true, "staged": true, "file": true, "folder": true, "git": true, "url": true}

// validRefPrefix is what a message can name after '@': a letter, then letters,
// digits, '_' or '-' (upstream's reference pattern).
func validRefPrefix(p string) bool {
	if p == "" || len(p) > 64 {
		return false
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '_' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// registerContextReference records an @<prefix>: provider. As upstream, a
// refused one is a warning and the plugin carries on.
func registerContextReference(_ context.Context, s *Session, rp protocol.RegisterOtherParams) (any, error) {
	raw, _ := rp.Details["prefix"].(string)
	desc, _ := rp.Details["description"].(string)
	var expand func(context.Context, string) (string, bool, error)
	if rp.Handle != "" {
		expand = s.remoteContextRef(rp.Handle)
	}
	return s.RegisterContextRef(raw, desc, expand)
}

// RegisterContextRef serves register_context_reference for every kind of
// plugin: @<prefix>:<target> in a user message becomes expand(target).
func (s *Session) RegisterContextRef(rawPrefix, desc string, expand func(context.Context, string) (string, bool, error)) (any, error) {
	key := s.p.ID()
	prefix := strings.ToLower(strings.TrimSpace(rawPrefix))
	refuse := func(why string) (any, error) {
		s.p.Warnf("Plugin '%s' context reference registration failed: %s", s.p.Manifest().Name, why)
		return protocol.RegisterResult{Registered: false, Warning: why}, nil
	}
	switch {
	case expand == nil:
		return refuse("the provider has no callable expand(target)")
	case prefix == "":
		return refuse("prefix must be a non-empty string")
	case builtinRefPrefixes[prefix]:
		return refuse(fmt.Sprintf("prefix '%s' is reserved for built-in references", prefix))
	case !validRefPrefix(prefix):
		return refuse(fmt.Sprintf("prefix %q cannot be written after '@' (use a letter, then letters, digits, '_' or '-')", prefix))
	case s.h.reg.ContextRefOwner(prefix) != "":
		return refuse(fmt.Sprintf("prefix '%s' is already registered", prefix))
	}
	s.h.reg.AddContextRef(key, &registry.ContextRef{Prefix: prefix, Description: desc, Plugin: key, Expand: expand},
		registry.Other{Registrar: "register_context_reference", Name: "@" + prefix + ":", Note: "expanded in chat messages"})
	return protocol.RegisterResult{Registered: true}, nil
}

func (s *Session) remoteContextRef(handle string) func(context.Context, string) (string, bool, error) {
	return func(ctx context.Context, target string) (string, bool, error) {
		raw, err := s.p.Call(ctx, protocol.MethodContextRefExpand, map[string]any{"handle": handle, "target": target})
		if err != nil {
			return "", false, asPluginError(err)
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return "", false, err
		}
		switch t := v.(type) {
		case nil:
			return "", false, nil
		case string:
			return t, true, nil
		}
		return "", false, fmt.Errorf("expand() returned %T, not a string or None", v)
	}
}

// BuiltinAuxTasks are upstream's own auxiliary task keys, which plugins may not take.
var BuiltinAuxTasks = map[string]bool{"vision": true, "compression": true, "approval": true, "mcp": true,
	"title_generation": true, "skills_hub": true, "curator": true}

// AuxDefaults are upstream's routing fields every auxiliary task has.
func AuxDefaults() map[string]any {
	return map[string]any{"provider": "auto", "model": "", "base_url": "", "api_key": "", "timeout": 60.0, "extra_body": map[string]any{}}
}

func registerAuxiliaryTask(_ context.Context, s *Session, rp protocol.RegisterOtherParams) (any, error) {
	me, key := s.p.Manifest().Name, s.p.ID()
	k, ok := rp.Details["key"].(string)
	if !ok || k == "" {
		return nil, protocol.Errorf(protocol.CodeInvalidArgument, "Plugin '%s' tried to register auxiliary task with invalid key %v", me, pyRepr(rp.Details["key"]))
	}
	for _, c := range k {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return nil, protocol.Errorf(protocol.CodeInvalidArgument, "Plugin '%s' auxiliary task key '%s' must contain only alphanumeric characters and underscores", me, k)
		}
	}
	if BuiltinAuxTasks[k] {
		return nil, protocol.Errorf(protocol.CodeInvalidArgument, "Plugin '%s' cannot register auxiliary task '%s' — that key is reserved for a built-in task. Pick a plugin-namespaced key (e.g. '%s_%s').", me, k, strings.ReplaceAll(me, "-", "_"), k)
	}
	if owner := s.h.reg.AuxTaskOwner(k); owner != "" && owner != key {
		return nil, protocol.Errorf(protocol.CodeInvalidArgument, "Plugin '%s' cannot register auxiliary task '%s' — already registered by plugin '%s'", me, k, owner)
	}
	defaults := AuxDefaults()
	if d, ok := rp.Details["defaults"].(map[string]any); ok {
		for dk, dv := range d {
			defaults[dk] = dv
		}
	} else if rp.Details["defaults"] != nil {
		return nil, protocol.Errorf(protocol.CodeInvalidArgument, "Plugin '%s' auxiliary task '%s': defaults must be a dict or None", me, k)
	}
	name, _ := rp.Details["display_name"].(string)
	desc, _ := rp.Details["description"].(string)
	s.h.reg.AddAuxTask(key, &registry.AuxTask{Key: k, DisplayName: name, Description: desc, Plugin: key, Defaults: defaults},
		registry.Other{Registrar: rp.Registrar, Name: k, Note: "configured under auxiliary." + k})
	return protocol.RegisterResult{Registered: true}, nil
}

func pyRepr(v any) string {
	if v == nil {
		return "None"
	}
	if s, ok := v.(string); ok {
		return "'" + s + "'"
	}
	return fmt.Sprint(v)
}
