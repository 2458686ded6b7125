package config

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hermes-go/hermes/internal/plugins/manifest"
)

// Messages printed by the v21 migration (upstream prints them indented under its
// "Config version" line; the caller chooses the indentation).
const (
	msgGrandfathered = "✓ Plugins now opt-in: grandfathered %d existing plugin(s) into plugins.enabled"
	msgNoneToGrand   = "✓ Plugins now opt-in: no existing plugins to grandfather. Use `hermes plugins enable <name>` to activate."
)

// ErrPluginsNotMapping is wrapped by Migrate's error when the plugins: section is not
// a mapping, so the migration cannot add plugins.enabled. Read-only commands go on
// without the migration (such a section enables nothing); edits report it.
var ErrPluginsNotMapping = errors.New("plugins section is not a mapping")

type pluginsNotMappingError struct{ msg string }

func (e *pluginsNotMappingError) Error() string        { return e.msg }
func (e *pluginsNotMappingError) Is(target error) bool { return target == ErrPluginsNotMapping }

// Version returns the document's _config_version; a missing or unreadable value is 0.
func Version(d *Doc) int {
	v, _ := d.Get(VersionKey)
	switch x := v.(type) {
	case int:
		return x
	case uint64:
		return math.MaxInt
	case float64:
		if x >= math.MaxInt {
			return math.MaxInt
		}
		if x > 0 {
			return int(x)
		}
	case string:
		if n, err := strconv.Atoi(strings.TrimSpace(x)); err == nil {
			return n
		}
	}
	return 0
}

// Migrate upgrades an existing config to LatestVersion. Below version 21 plugins became
// opt-in: when plugins.enabled is absent, every plugin directory under pluginsDir (sorted,
// with a plugin.yaml or plugin.yml) is grandfathered into plugins.enabled under its
// manifest name (else its directory name), skipping names in plugins.disabled; the list is
// written even when empty. Then _config_version becomes 21; a higher version is left alone
// and such a document is not touched at all.
//
// Callers run Migrate only when config.yaml already existed: a missing file is a fresh
// install, which starts at the latest version and grandfathers nothing. Run it inside
// Store.Update so an error writes nothing (d may be partly edited when an error returns).
func Migrate(d *Doc, pluginsDir string) ([]string, error) {
	if Version(d) >= LatestVersion {
		return nil, nil
	}
	var msgs []string
	raw, _ := d.Get("plugins")
	sec, isMap := raw.(map[string]any)
	if raw != nil && !isMap {
		return nil, &pluginsNotMappingError{fmt.Sprintf("%s: plugins is %s, not a mapping, so plugins.enabled cannot be added; fix it and run hermes again", d.name, kindOf(raw))}
	}
	if _, has := sec["enabled"]; !has {
		disabled := map[string]bool{}
		if list, ok := sec["disabled"].([]any); ok {
			for _, x := range list {
				if s, ok := x.(string); ok {
					disabled[s] = true
				}
			}
		}
		names, err := installedUserPlugins(pluginsDir, disabled)
		if err != nil {
			return nil, err
		}
		list := make([]any, len(names))
		for i, n := range names {
			list[i] = n
		}
		if err := d.SetPath([]string{"plugins", "enabled"}, list); err != nil {
			return nil, err
		}
		if len(names) > 0 {
			msgs = append(msgs, fmt.Sprintf(msgGrandfathered, len(names)))
		} else {
			msgs = append(msgs, msgNoneToGrand)
		}
	}
	if err := d.SetPath([]string{VersionKey}, LatestVersion); err != nil {
		return nil, err
	}
	return msgs, nil
}

// installedUserPlugins lists the plugin names found in pluginsDir, in directory order.
func installedUserPlugins(pluginsDir string, disabled map[string]bool) ([]string, error) {
	names := []string{}
	if pluginsDir == "" {
		return names, nil
	}
	entries, err := os.ReadDir(pluginsDir)
	if errors.Is(err, fs.ErrNotExist) || isNotDir(pluginsDir) {
		return names, nil
	}
	if err != nil {
		// Guessing "none" here would silently switch off every installed plugin.
		return nil, fmt.Errorf("list plugins directory to keep installed plugins enabled: %w; fix its permissions and run hermes again", err)
	}
	for _, e := range entries {
		dir := filepath.Join(pluginsDir, e.Name())
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue
		}
		name, ok := manifestName(dir)
		if !ok {
			continue
		}
		if disabled[name] {
			continue
		}
		names = append(names, name)
	}
	return names, nil
}

func isNotDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir()
}

// manifestName is the name discovery keys the plugin in dir by, read with the same
// manifest parser (BOM, numeric names, invalid names falling back to the directory).
// ok is false when dir has no manifest. A manifest that does not parse keeps the
// directory name, as upstream's migration does.
func manifestName(dir string) (string, bool) {
	m, _, err := manifest.LoadDir(dir)
	switch {
	case errors.Is(err, manifest.ErrNoManifest):
		return "", false
	case err != nil:
		return filepath.Base(dir), true
	}
	return m.Name, true
}
