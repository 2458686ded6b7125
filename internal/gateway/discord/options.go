package discord

import (
	"fmt"
	"strings"

	"github.com/hermes-go/hermes/internal/termsafe"
)

// OptionsFromEnv reads upstream's DISCORD_* settings through env (a lookup
// of ~/.hermes/.env and the environment): DISCORD_BOT_TOKEN,
// DISCORD_REQUIRE_MENTION and DISCORD_AUTO_THREAD (both default true),
// DISCORD_ALLOW_BOTS (none, mentions or all; default none),
// DISCORD_REPLY_TO_MODE (off, first or all; default first), and the
// comma-separated ids of DISCORD_ALLOWED_ROLES, DISCORD_FREE_RESPONSE_CHANNELS,
// DISCORD_NO_THREAD_CHANNELS, DISCORD_IGNORED_CHANNELS and
// DISCORD_ALLOWED_CHANNELS. BaseURL, Logger and Now
// are the caller's to fill in.
func OptionsFromEnv(env func(string) string) (Options, error) {
	o := Options{Token: env("DISCORD_BOT_TOKEN")}
	var err error
	if o.RequireMention, err = envBool(env, "DISCORD_REQUIRE_MENTION", true); err != nil {
		return Options{}, err
	}
	if o.AutoThread, err = envBool(env, "DISCORD_AUTO_THREAD", true); err != nil {
		return Options{}, err
	}
	switch v := strings.ToLower(strings.TrimSpace(env("DISCORD_ALLOW_BOTS"))); v {
	case "", "none":
		o.AllowBots = BotsNone
	case BotsMentions, BotsAll:
		o.AllowBots = v
	default:
		return Options{}, fmt.Errorf("DISCORD_ALLOW_BOTS=\"%s\": want none, mentions or all", termsafe.Line(env("DISCORD_ALLOW_BOTS")))
	}
	switch v := strings.ToLower(strings.TrimSpace(env("DISCORD_REPLY_TO_MODE"))); v {
	case "", "first":
		o.ReplyToMode = ReplyFirst
	case ReplyAll, ReplyOff:
		o.ReplyToMode = v
	default:
		return Options{}, fmt.Errorf("DISCORD_REPLY_TO_MODE=\"%s\": want off, first or all", termsafe.Line(env("DISCORD_REPLY_TO_MODE")))
	}
	for name, dst := range map[string]*[]string{
		"DISCORD_ALLOWED_ROLES":          &o.AllowedRoles,
		"DISCORD_FREE_RESPONSE_CHANNELS": &o.FreeResponseChannels,
		"DISCORD_NO_THREAD_CHANNELS":     &o.NoThreadChannels,
		"DISCORD_IGNORED_CHANNELS":       &o.IgnoredChannels,
		"DISCORD_ALLOWED_CHANNELS":       &o.AllowedChannels,
	} {
		if *dst, err = envIDs(env, name); err != nil {
			return Options{}, err
		}
	}
	return o, nil
}

func envBool(env func(string) string, name string, def bool) (bool, error) {
	v := strings.ToLower(strings.TrimSpace(env(name)))
	switch v {
	case "":
		return def, nil
	case "true", "1", "yes", "on":
		return true, nil
	case "false", "0", "no", "off":
		return false, nil
	}
	return false, fmt.Errorf("%s=\"%s\": want true or false", name, termsafe.Line(env(name)))
}

func envIDs(env func(string) string, name string) ([]string, error) {
	var ids []string
	for _, id := range strings.Split(env(name), ",") {
		if id = strings.TrimSpace(id); id == "" {
			continue
		}
		if !numeric(id) {
			return nil, fmt.Errorf("%s: \"%s\" is not a Discord id (digits only; copy it with Developer Mode on)", name, termsafe.Line(id))
		}
		ids = append(ids, id)
	}
	return ids, nil
}
