package hostapi

import (
	"context"
	"fmt"
	"net/url"

	"github.com/hermes-go/hermes/internal/lazyre"
	"github.com/hermes-go/hermes/internal/plugins/registry"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// register_provider: many model providers load at once (unlike memory
// providers and context engines); model.provider or --provider picks one by
// name. The fields are checked here so a bad profile fails at load, naming
// the field, not at the first chat.

var providerNameRE = lazyre.New(`^[a-z0-9][a-z0-9_.-]{0,63}$`)

var headerNameRE = lazyre.New("^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$")

func registerModelProvider(_ context.Context, s *Session, rp protocol.RegisterOtherParams) (any, error) {
	bad := func(format string, args ...any) error {
		return protocol.Errorf(protocol.CodeInvalidArgument, "register_provider %s: "+format, append([]any{rp.Name}, args...)...)
	}
	if !providerNameRE.MatchString(rp.Name) {
		return nil, protocol.Errorf(protocol.CodeInvalidArgument,
			"register_provider: the profile's name %q must be 1-64 lowercase letters, digits, '_', '-' or '.' (it is what model.provider selects)", rp.Name)
	}
	if base, _ := rp.Details["base_url"].(string); base != "" {
		if u, err := url.Parse(base); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, bad("base_url %q is not an http(s) URL", base)
		}
	}
	if mode, _ := rp.Details["api_mode"].(string); mode != "" && mode != "chat_completions" {
		s.p.Warnf("plugin %s: model provider '%s' has api_mode %q; hermes speaks chat_completions only, so selecting it fails", s.p.ID(), rp.Name, mode)
	}
	if h, ok := rp.Details["default_headers"].(map[string]any); ok {
		for k, v := range h {
			sv, isStr := v.(string)
			if !headerNameRE.MatchString(k) || !isStr || !validHeaderValue(sv) {
				return nil, bad("default_headers %q is not a valid HTTP header (a token name and a printable value)", k)
			}
		}
	}
	for _, p := range s.h.reg.Providers(registry.ModelProvider) {
		if p.Name == rp.Name && p.Plugin != s.p.ID() {
			// The later plugin wins, as upstream's register_provider (last writer).
			s.p.Warnf("plugin %s: model provider '%s' replaces the one plugin %s registered", s.p.ID(), rp.Name, p.Plugin)
		}
	}
	note := fmt.Sprintf("selected by model.provider: %s", rp.Name)
	s.h.reg.AddProvider(s.p.ID(), registry.Other{Registrar: rp.Registrar, Name: rp.Name, Note: note},
		registry.Provider{Kind: registry.ModelProvider, Name: rp.Name, Details: rp.Details, Conn: engineConn{s.p}})
	return protocol.RegisterResult{Registered: true}, nil
}

func validHeaderValue(v string) bool {
	for _, r := range v {
		if r < 0x20 && r != '\t' || r == 0x7f {
			return false
		}
	}
	return true
}
