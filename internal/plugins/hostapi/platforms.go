package hostapi

import (
	"context"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/hermes-go/hermes/internal/lazyre"
	"github.com/hermes-go/hermes/internal/plugins/registry"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// register_platform: the entry is recorded for the gateway, which builds an
// adapter proxy over the plugin's process for it (internal/gateway/pluginplatform).

var (
	platformNameRE = lazyre.New(`^[a-z0-9][a-z0-9_-]{0,63}$`)
	envNameRE      = lazyre.New(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)
)

// builtinPlatforms are the platforms hermes serves itself: a plugin may not
// take their names (their allowlists, sessions and pairing files are theirs).
var builtinPlatforms = map[string]bool{"telegram": true, "discord": true, "local": true, "cli": true}

// Bounds on the entry's texts: they reach logs and, for platform_hint, the prompt.
const (
	maxPlatformLabel = 100
	maxPlatformHint  = 4000
)

func registerPlatform(_ context.Context, s *Session, rp protocol.RegisterOtherParams) (any, error) {
	key := s.p.ID()
	name := rp.Name
	if !platformNameRE.MatchString(name) {
		return nil, protocol.Errorf(protocol.CodeInvalidArgument,
			"register_platform: name %q must be 1-64 lower-case letters, digits, '_' or '-' (it is the platforms.<name> key of config.yaml)", name)
	}
	if builtinPlatforms[name] {
		s.p.Warnf("plugin %s: platform '%s' is built into hermes; the plugin's registration is skipped", key, name)
		return protocol.RegisterResult{Registered: false, Warning: "conflicts with a built-in platform"}, nil
	}
	d := rp.Details
	str := func(k string) string { v, _ := d[k].(string); return v }
	envName := func(k string) string {
		v := str(k)
		if v != "" && !envNameRE.MatchString(v) {
			s.p.Warnf("plugin %s: platform '%s': %s %q is not an environment variable name; the default is used", key, name, k, v)
			return ""
		}
		return v
	}
	det := registry.PlatformDetails{
		InstallHint: clip(str("install_hint"), maxPlatformHint), AllowedUsersEnv: envName("allowed_users_env"),
		AllowAllEnv: envName("allow_all_env"), Emoji: clip(str("emoji"), 16), PlatformHint: clip(str("platform_hint"), maxPlatformHint),
	}
	if list, ok := d["required_env"].([]any); ok {
		for _, v := range list {
			if sv, ok := v.(string); ok && envNameRE.MatchString(sv) {
				det.RequiredEnv = append(det.RequiredEnv, sv)
			} else {
				s.p.Warnf("plugin %s: platform '%s': required_env entry %v is not an environment variable name; ignored", key, name, v)
			}
		}
	}
	if n, ok := d["max_message_length"].(float64); ok && n > 0 && n < 1<<31 {
		det.MaxMessageLength = int(n)
	}
	label := clip(str("label"), maxPlatformLabel)
	if label == "" {
		label = name
	}
	entry := &registry.PlatformEntry{Name: name, Label: label, Plugin: key, Details: det, Conn: pluginConn{s.p}}
	if h := str("check_handle"); h != "" {
		entry.Check = func(ctx context.Context) (bool, error) {
			raw, err := s.p.Call(ctx, protocol.MethodCheck, protocol.CheckCallParams{Handle: h})
			if err != nil {
				return false, asPluginError(err)
			}
			var ok bool
			_ = json.Unmarshal(raw, &ok)
			return ok, nil
		}
	}
	s.h.reg.AddPlatform(key, entry)
	s.h.reg.AddOther(key, registry.Other{Registrar: rp.Registrar, Name: name, Note: "served by `hermes gateway` when enabled"}, rp.Handle, nil)
	return protocol.RegisterResult{Registered: true}, nil
}

// clip cuts s to at most n bytes, on a rune boundary.
func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// pluginConn is a platform's way into its plugin's current process.
type pluginConn struct{ p Caller }

func (c pluginConn) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	return c.p.Call(ctx, method, params)
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (c pluginConn) Exited() <-chan struct{} {
	if proc := c.p.Process(); proc != nil {
		return proc.Exited()
	}
	return closedChan
}

// platformEvent is an adapter's handle_message(event): to the gateway adapter
// that serves the plugin's platform, which checks it.
func platformEvent(ctx context.Context, s *Session, ev protocol.PlatformEventParams) (any, error) {
	rc, ok := s.h.reg.PlatformReceiver(s.p.ID(), ev.Platform)
	if !ok || rc.Event == nil {
		return nil, protocol.Errorf(protocol.CodeNotAvailable,
			"no hermes gateway is serving platform %q of plugin %s in this process (run `hermes gateway run` with platforms.%s.enabled: true)",
			ev.Platform, s.p.ID(), ev.Platform)
	}
	if err := rc.Event(ctx, ev); err != nil {
		return nil, protocol.Errorf(protocol.CodeInvalidArgument, "%v", err)
	}
	return map[string]bool{"accepted": true}, nil
}

func platformStatus(_ context.Context, s *Session, st protocol.PlatformStatusParams) (any, error) {
	if rc, ok := s.h.reg.PlatformReceiver(s.p.ID(), st.Platform); ok && rc.Status != nil {
		rc.Status(st)
	}
	return nil, nil
}
