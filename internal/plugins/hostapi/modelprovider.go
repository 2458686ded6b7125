package hostapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"

	"github.com/hermes-go/hermes/internal/lazyre"
	"github.com/hermes-go/hermes/internal/plugins/registry"
	"github.com/hermes-go/hermes/pkg/pluginsdk"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// register_provider: many model providers load at once (unlike memory
// providers and context engines); model.provider or --provider picks one by
// name. The fields are checked here so a bad profile fails at load, naming
// the field, not at the first chat.

var providerNameRE = lazyre.New(`^[a-z0-9][a-z0-9_.-]{0,63}$`)

var headerNameRE = lazyre.New("^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$")

func registerModelProvider(_ context.Context, s *Session, rp protocol.RegisterOtherParams) (any, error) {
	return addModelProvider(s, rp, engineConn{s.p})
}

// addModelProvider checks and records one profile: a plugin's
// register_provider and a compiled-in (bundled) profile take this one path.
func addModelProvider(s *Session, rp protocol.RegisterOtherParams, conn registry.PlatformConn) (any, error) {
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
	bundled := s.p.Bundled()
	for _, p := range s.h.reg.Providers(registry.ModelProvider) {
		if p.Name == rp.Name && p.Plugin != s.p.ID() && !p.Bundled && !bundled {
			// The later plugin wins, as upstream's register_provider (last writer).
			s.p.Warnf("plugin %s: model provider '%s' replaces the one plugin %s registered", s.p.ID(), rp.Name, p.Plugin)
		}
	}
	note := fmt.Sprintf("selected by model.provider: %s", rp.Name)
	s.h.reg.AddProvider(s.p.ID(), registry.Other{Registrar: rp.Registrar, Name: rp.Name, Note: note},
		registry.Provider{Kind: registry.ModelProvider, Name: rp.Name, Details: rp.Details, Conn: conn, Bundled: bundled})
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

// RegisterProvider of a compiled-in plugin: the profile's hooks are called in
// this process through the same model_provider.call shapes.
func (c *localContext) RegisterProvider(p pluginsdk.ProviderProfile) error {
	rp := protocol.RegisterOtherParams{Registrar: "register_provider", Name: p.Name, Details: p.Details()}
	var conn registry.PlatformConn
	if len(p.Hooks()) > 0 {
		conn = localProvider{&p}
	}
	return asGoErr(addModelProvider(c.s, rp, conn))
}

// localProvider is a compiled-in profile behind the registry's connection interface.
type localProvider struct{ p *pluginsdk.ProviderProfile }

func (l localProvider) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	mp, ok := params.(protocol.ModelProviderCallParams)
	if !ok {
		return nil, fmt.Errorf("model provider call %s: unexpected params %T", method, params)
	}
	args, err := viaJSON(mp.Kwargs)
	if err != nil {
		return nil, err
	}
	out, err := pluginsdk.ServeModelProvider(ctx, l.p, mp.Method, args)
	if err != nil {
		return nil, err
	}
	return json.Marshal(out)
}

func (l localProvider) Exited() <-chan struct{} { return make(chan struct{}) }

// viaJSON gives a compiled-in plugin the values a plugin process would see.
func viaJSON(v map[string]any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	err = json.Unmarshal(b, &out)
	return out, err
}
