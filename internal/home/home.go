// Package home resolves HERMES_HOME, profiles and the well-known paths inside them.
package home

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hermes-go/hermes/internal/lazyre"
)

// EnvHome is the environment variable that overrides the default ~/.hermes root.
const EnvHome = "HERMES_HOME"

var profileNameRE = lazyre.New(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// Home is one resolved HERMES_HOME: the default root, a profile under it, or a custom directory.
type Home struct {
	// Dir is the effective HERMES_HOME: every path below derives from it.
	Dir string
	// Profile is "default", the profile id, or "custom" (HERMES_HOME points elsewhere).
	Profile string
}

// Resolve picks the effective home. env reads the environment (os.Getenv in production),
// profile is the --profile flag value ("" when not given).
func Resolve(env func(string) string, profile string) (Home, error) {
	root := env(EnvHome)
	custom := root != ""
	if root == "" {
		userHome := env("HOME")
		if userHome == "" {
			var err error
			userHome, err = os.UserHomeDir()
			if err != nil {
				return Home{}, fmt.Errorf("cannot find the home directory: set HERMES_HOME: %w", err)
			}
		}
		root = filepath.Join(userHome, ".hermes")
	}
	root = expandTilde(root, env)
	abs, err := filepath.Abs(root)
	if err != nil {
		return Home{}, fmt.Errorf("resolve HERMES_HOME %q: %w", root, err)
	}
	root = abs
	if profile != "" && profile != "default" {
		if len(profile) > 64 || !profileNameRE.MatchString(profile) {
			return Home{}, fmt.Errorf("invalid profile name %q: use letters, digits, '.', '_' or '-'", profile)
		}
		// A profile lives under the root's profiles/ directory; when HERMES_HOME already
		// points into a profile, profiles are siblings of it.
		base := root
		if parent := filepath.Dir(root); filepath.Base(parent) == "profiles" {
			base = filepath.Dir(parent)
		}
		return Home{Dir: filepath.Join(base, "profiles", profile), Profile: profile}, nil
	}
	return Home{Dir: root, Profile: profileOf(root, custom, env)}, nil
}

// profileOf derives ctx.profile_name the way upstream does: "default" for the default root,
// the profile id for <root>/profiles/<id>, "custom" for anything else.
func profileOf(dir string, custom bool, env func(string) string) string {
	if parent := filepath.Dir(dir); filepath.Base(parent) == "profiles" {
		return filepath.Base(dir)
	}
	if !custom {
		return "default"
	}
	if userHome := env("HOME"); userHome != "" && filepath.Clean(dir) == filepath.Join(userHome, ".hermes") {
		return "default"
	}
	return "custom"
}

func expandTilde(p string, env func(string) string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if h := env("HOME"); h != "" {
			return filepath.Join(h, strings.TrimPrefix(p, "~"))
		}
	}
	return p
}

// ConfigPath is <home>/config.yaml.
func (h Home) ConfigPath() string { return filepath.Join(h.Dir, "config.yaml") }

// EnvPath is <home>/.env, where secrets such as requires_env values live.
func (h Home) EnvPath() string { return filepath.Join(h.Dir, ".env") }

// PluginsDir is <home>/plugins, the user plugin source.
func (h Home) PluginsDir() string { return filepath.Join(h.Dir, "plugins") }

// PluginDataDir is <home>/plugin-data/<namespace>, a plugin's private storage.
func (h Home) PluginDataDir(namespace string) string {
	return filepath.Join(h.Dir, "plugin-data", namespace)
}

// SkillsDir is where the user's skills live: <dir>/skills/<name>/SKILL.md.
func (h Home) SkillsDir() string { return filepath.Join(h.Dir, "skills") }

// CacheDir is <home>/cache.
func (h Home) CacheDir() string { return filepath.Join(h.Dir, "cache") }

// LogsDir is <home>/logs.
func (h Home) LogsDir() string { return filepath.Join(h.Dir, "logs") }

// PluginLogPath is plugins.log: plugin output and hermes' warnings.
func (h Home) PluginLogPath() string { return filepath.Join(h.LogsDir(), "plugins.log") }

// EnsureDir creates dir (and parents) with private permissions.
func EnsureDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	return nil
}
