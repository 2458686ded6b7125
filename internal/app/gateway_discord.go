package app

import (
	"fmt"
	"strings"

	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/gateway/discord"
	"github.com/hermes-go/hermes/internal/gateway/platform"
)

// platformEnabled reads whether a platform is served: platforms.<name>.enabled
// when set (an explicit false wins; true needs the token), else whether its
// token is in .env or the environment.
func (g *Gateway) platformEnabled(doc *config.Doc, env func(string) string, name, tokenVar string) (bool, error) {
	v, set := doc.GetPath([]string{"platforms", name, "enabled"})
	if set && v != nil {
		b, ok := config.Bool(v)
		if !ok {
			return false, configError("platforms.%s.enabled in config.yaml is %v: use true or false", name, v)
		}
		if b && env(tokenVar) == "" {
			return false, configError("platforms.%s.enabled is true but %s is not set: put it in %s", name, tokenVar, g.h.home.EnvPath())
		}
		return b, nil
	}
	return env(tokenVar) != "", nil
}

// discordAdapter builds the Discord adapter from the DISCORD_* settings
// (wave2 §2.8) and platforms.discord.extra.base_url.
func (g *Gateway) discordAdapter(doc *config.Doc, env func(string) string) (platform.Adapter, error) {
	o, err := discord.OptionsFromEnv(discordSettings(doc, env))
	if err != nil {
		return nil, configError("%v", err)
	}
	if o.BaseURL, err = extraString(doc, env, discord.Name, "base_url"); err != nil {
		return nil, err
	}
	o.Logger = g.log.logger
	g.owners.discordOptions(&o)
	a, err := discord.New(o)
	if err != nil {
		return nil, configError("%v", err)
	}
	return a, nil
}

// discordSettings looks a DISCORD_* setting up in .env and the environment,
// then, as upstream bridges config.yaml into unset variables, under its
// lower-case name without the prefix in platforms.discord.extra,
// platforms.discord or a top-level discord: block (require_mention: false,
// free_response_channels: [123, 456]). The token is never read from config.yaml.
func discordSettings(doc *config.Doc, env func(string) string) func(string) string {
	return func(name string) string {
		if v := env(name); v != "" || name == "DISCORD_BOT_TOKEN" {
			return v
		}
		key := strings.ToLower(strings.TrimPrefix(name, "DISCORD_"))
		for _, path := range [][]string{{"platforms", discord.Name, "extra", key}, {"platforms", discord.Name, key}, {discord.Name, key}} {
			if v, ok := doc.GetPath(path); ok && v != nil {
				return settingString(v)
			}
		}
		return ""
	}
}

// settingString is a config value as the variable would spell it: a list
// comma-separated, anything else as YAML wrote it.
func settingString(v any) string {
	if list, ok := v.([]any); ok {
		parts := make([]string, 0, len(list))
		for _, x := range list {
			parts = append(parts, settingString(x))
		}
		return strings.Join(parts, ",")
	}
	return fmt.Sprint(v)
}
