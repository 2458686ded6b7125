package plugins

import (
	"maps"
	"slices"
	"strings"

	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/home"
)

func (m *Manager) pluginEnv() []string {
	m.envOnce.Do(func() {
		dotenv, err := config.ReadDotenv(m.opts.Home.EnvPath())
		if err != nil {
			m.warn("plugins start without the variables of %s: %v", m.opts.Home.EnvPath(), err)
		}
		m.env = withDotenv(m.opts.Environ(), dotenv)
	})
	return append(slices.Clip(m.env), home.EnvHome+"="+m.opts.Home.Dir)
}

// withDotenv is the environment plugins get: $HERMES_HOME/.env over the
// process's, as upstream's load_hermes_dotenv does (a key saved there, e.g. by
// the install prompt for requires_env, wins over a stale exported one).
func withDotenv(environ []string, dotenv map[string]string) []string {
	if len(dotenv) == 0 {
		return environ
	}
	out := make([]string, 0, len(environ)+len(dotenv))
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if _, over := dotenv[k]; !over {
			out = append(out, kv)
		}
	}
	keys := slices.Sorted(maps.Keys(dotenv))
	for _, k := range keys {
		if k == home.EnvHome {
			continue // the profile's home is hermes' to set
		}
		out = append(out, k+"="+dotenv[k])
	}
	return out
}
