package app

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/gateway/auth"
	"github.com/hermes-go/hermes/internal/gateway/platform"
	"github.com/hermes-go/hermes/internal/gateway/pluginplatform"
	"github.com/hermes-go/hermes/internal/plugins/registry"
	"github.com/hermes-go/hermes/internal/termsafe"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// pluginAdapters builds the adapter proxy of every enabled platform a plugin
// registered: enabled by platforms.<name>.enabled in config.yaml (an explicit
// false wins), or, without that key, by every one of its required_env being
// set. A platform whose check_fn answers False is skipped with a warning.
// Each one's allowlist variables go to g.authEnv.
func (g *Gateway) pluginAdapters(ctx context.Context, doc *config.Doc, env func(string) string) ([]platform.Adapter, error) {
	reg := g.h.Registry
	entries, replaced := reg.Platforms()
	for _, msg := range replaced {
		g.log.logger.Warn(msg)
	}
	var out []platform.Adapter
	for _, ent := range entries {
		on, fromEnv, err := pluginPlatformEnabled(doc, env, ent)
		if err != nil {
			return nil, err
		}
		if !on {
			continue
		}
		log := g.log.logger.With("platform", ent.Name, "plugin", ent.Plugin)
		if ent.Check != nil {
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			ok, err := ent.Check(cctx)
			cancel()
			if err != nil || !ok {
				reason := "check_fn returned False"
				if err != nil {
					reason = "check_fn failed: " + termsafe.Line(err.Error())
				}
				log.Warn("platform: skipped, its plugin says it cannot run here", "reason", reason, "install_hint", termsafe.Line(ent.Details.InstallHint))
				g.skipped = append(g.skipped, fmt.Sprintf("%s (%s)", ent.Name, reason))
				continue
			}
		}
		start := protocol.PlatformStartParams{FromEnv: fromEnv}
		if start.Extra, err = platformExtra(doc, env, ent.Name); err != nil {
			return nil, err
		}
		if start.Token, err = platformString(doc, env, ent.Name, "token"); err != nil {
			return nil, err
		}
		if start.APIKey, err = platformString(doc, env, ent.Name, "api_key"); err != nil {
			return nil, err
		}
		a, err := pluginplatform.New(pluginplatform.Options{
			Name: ent.Name, Plugin: ent.Plugin, Conn: ent.Conn, Bind: binder(reg, ent), Start: start,
			MaxMessageLength: ent.Details.MaxMessageLength, Logger: g.log.logger,
		})
		if err != nil {
			return nil, err
		}
		out = append(out, a)
		g.Platforms = append(g.Platforms, ent.Name)
		g.requireMention[ent.Name] = platformBool(doc, ent.Name, "require_mention", false)
		names := auth.DefaultPlatformEnv(ent.Name)
		if ent.Details.AllowedUsersEnv != "" {
			names.AllowedUsers = ent.Details.AllowedUsersEnv
		}
		if ent.Details.AllowAllEnv != "" {
			names.AllowAll = ent.Details.AllowAllEnv
		}
		if g.authEnv == nil {
			g.authEnv = map[string]auth.PlatformEnv{}
		}
		g.authEnv[ent.Name] = names
	}
	return out, nil
}

func binder(reg *registry.Registry, ent *registry.PlatformEntry) pluginplatform.Binder {
	return func(ev func(context.Context, protocol.PlatformEventParams) error, st func(protocol.PlatformStatusParams)) func() {
		return reg.BindPlatform(ent.Plugin, ent.Name, registry.PlatformReceiver{Event: ev, Status: st})
	}
}

// pluginPlatformEnabled: platforms.<name>.enabled, else all of required_env
// set (fromEnv: the entry's env_enablement_fn then seeds its extra).
func pluginPlatformEnabled(doc *config.Doc, env func(string) string, ent *registry.PlatformEntry) (on, fromEnv bool, err error) {
	if v, set := doc.GetPath([]string{"platforms", ent.Name, "enabled"}); set && v != nil {
		b, ok := config.Bool(v)
		if !ok {
			return false, false, configError("platforms.%s.enabled in config.yaml is %v: use true or false", ent.Name, v)
		}
		return b, false, nil
	}
	req := ent.Details.RequiredEnv
	if len(req) == 0 {
		return false, false, nil
	}
	for _, k := range req {
		if env(k) == "" {
			return false, false, nil
		}
	}
	return true, true, nil
}

// platformExtra is platforms.<name>.extra, its strings' ${VAR} references
// expanded from the environment and .env.
func platformExtra(doc *config.Doc, env func(string) string, name string) (map[string]any, error) {
	v, ok := doc.GetPath([]string{"platforms", name, "extra"})
	if !ok || v == nil {
		return nil, nil
	}
	m, isMap := v.(map[string]any)
	if !isMap {
		return nil, configError("platforms.%s.extra in config.yaml must be a mapping, not %T", name, v)
	}
	out, err := expandRefs(m, env, "platforms."+name+".extra")
	if err != nil {
		return nil, err
	}
	return out.(map[string]any), nil
}

func expandRefs(v any, env func(string) string, at string) (any, error) {
	switch x := v.(type) {
	case string:
		var missing string
		s := varRef.Get().ReplaceAllStringFunc(x, func(ref string) string {
			val := env(ref[2 : len(ref)-1])
			if val == "" && missing == "" {
				missing = ref[2 : len(ref)-1]
			}
			return val
		})
		if missing != "" {
			return nil, configError("%s refers to ${%s}, which is set neither in the environment nor in .env", at, missing)
		}
		return s, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			r, err := expandRefs(e, env, at+"."+k)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			r, err := expandRefs(e, env, fmt.Sprintf("%s[%d]", at, i))
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	}
	return v, nil
}

// platformString is platforms.<name>.<key> as a string, ${VAR} expanded.
func platformString(doc *config.Doc, env func(string) string, name, key string) (string, error) {
	v, ok := doc.GetPath([]string{"platforms", name, key})
	if !ok || v == nil {
		return "", nil
	}
	s, isStr := v.(string)
	if !isStr {
		return "", configError("platforms.%s.%s in config.yaml must be a string, not %T", name, key, v)
	}
	r, err := expandRefs(s, env, "platforms."+name+"."+key)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(r.(string)), nil
}
