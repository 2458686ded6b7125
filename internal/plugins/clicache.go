package plugins

import (
	"bytes"
	"encoding/json"
	"hash/fnv"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/google/renameio/v2"

	"github.com/hermes-go/hermes/internal/plugins/discovery"
	"github.com/hermes-go/hermes/internal/plugins/registry"
)

// The CLI commands plugins register (`hermes <name>`) are known only once the
// plugins run, but `hermes --help` should list them without starting any plugin.
// So every load records, per plugin, the commands it registered, stamped with the
// state of the files that define the plugin; help lists the recorded commands of
// the plugins whose stamp still matches. Shell completion reads the tool names
// recorded the same way.

const cliCacheFile = "cli-commands.json"

type cliCache struct {
	Plugins map[string]cliCacheEntry `json:"plugins"`
}

type cliCacheEntry struct {
	Stamp    string                    `json:"stamp"`
	Commands []registry.CLICommandInfo `json:"commands"`
	Tools    []string                  `json:"tools,omitempty"`
}

// CachedCLICommand is a plugin CLI command recorded at the plugin's last load.
type CachedCLICommand struct {
	registry.CLICommandInfo
	Plugin string
}

// pluginStamp identifies what a plugin's registrations come from: its source and
// directory, and the modification time and size of the files that define it.
// A change elsewhere in the plugin (a submodule) goes unnoticed until its next load.
func pluginStamp(p *Plugin, hostVersion string) string {
	c := p.Candidate
	h := fnv.New64a()
	add := func(s string) { h.Write([]byte(s)); h.Write([]byte{0}) }
	add(string(c.Source))
	add(c.Dir)
	add(string(p.Runtime))
	if c.Builtin {
		add(hostVersion)
	}
	if c.EntryPoint != nil {
		add(c.EntryPoint.Value)
	}
	if c.Manifest != nil {
		add(c.Manifest.Version)
	}
	if c.Dir != "" && c.EntryPoint == nil {
		for _, name := range []string{"plugin.yaml", "plugin.yml", "__init__.py", "tools.py"} {
			if fi, err := os.Stat(filepath.Join(c.Dir, name)); err == nil {
				add(name + ":" + strconv.FormatInt(fi.ModTime().UnixNano(), 10) + ":" + strconv.FormatInt(fi.Size(), 10))
			}
		}
	}
	return strconv.FormatUint(h.Sum64(), 16)
}

func (m *Manager) cliCachePath() string {
	if m.opts.Home.Dir == "" {
		return ""
	}
	return filepath.Join(m.opts.Home.CacheDir(), cliCacheFile)
}

// readCLICache returns the cache and the bytes it was read from.
func (m *Manager) readCLICache() (cliCache, []byte) {
	var c cliCache
	var raw []byte
	if path := m.cliCachePath(); path != "" {
		if b, err := os.ReadFile(path); err == nil {
			raw = b
			_ = json.Unmarshal(b, &c) // a damaged cache is rebuilt by the next load
		}
	}
	if c.Plugins == nil {
		c.Plugins = map[string]cliCacheEntry{}
	}
	return c, raw
}

// rememberCLICommands records what the plugins started by this load registered.
// Plugins no longer discovered are dropped; a plugin that failed is dropped too
// (its commands do not work). The file is rewritten only when it changes.
func (m *Manager) rememberCLICommands(started []*Plugin) {
	path := m.cliCachePath()
	if path == "" {
		return
	}
	old, cur := m.readCLICache()
	next := cliCache{Plugins: map[string]cliCacheEntry{}}
	m.mu.Lock()
	for key, e := range old.Plugins {
		if _, ok := m.plugins[key]; ok {
			next.Plugins[key] = e
		}
	}
	m.mu.Unlock()
	for _, p := range started {
		if !p.IsLoaded() {
			delete(next.Plugins, p.Key)
			continue
		}
		snap := p.Snapshot()
		cmds := append([]registry.CLICommandInfo{}, snap.CLICommands...)
		sort.Slice(cmds, func(i, j int) bool { return cmds[i].Name < cmds[j].Name })
		tools := append([]string(nil), snap.Tools...)
		sort.Strings(tools)
		next.Plugins[p.Key] = cliCacheEntry{Stamp: pluginStamp(p, m.opts.HostVersion), Commands: cmds, Tools: tools}
	}
	body, err := json.Marshal(next)
	if err != nil {
		return
	}
	if bytes.Equal(cur, body) {
		return
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		m.log.Debug("cli command cache not written", "err", err)
		return
	}
	if err := renameio.WriteFile(path, body, 0o600); err != nil {
		m.log.Debug("cli command cache not written", "err", err)
	}
}

// CachedCLICommands returns, without starting any plugin, the CLI commands the
// plugins that would load registered the last time they loaded, and the keys of
// those whose commands are not known (never loaded here, or changed since).
func (m *Manager) CachedCLICommands() (cmds []CachedCLICommand, unknown []string) {
	cache, _ := m.readCLICache()
	for _, p := range m.Plugins() {
		if !p.Decision.Starts() || m.SafeMode() {
			continue
		}
		if p.Candidate.Builtin && p.Candidate.Category == discovery.CategoryModelProvider {
			continue // a provider profile registers no CLI command
		}
		e, ok := cache.Plugins[p.Key]
		if !ok || e.Stamp != pluginStamp(p, m.opts.HostVersion) {
			unknown = append(unknown, p.Key)
			continue
		}
		for _, c := range e.Commands {
			cmds = append(cmds, CachedCLICommand{CLICommandInfo: c, Plugin: p.Key})
		}
	}
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].Name < cmds[j].Name })
	return cmds, unknown
}

// CachedToolNames returns, without starting any plugin, the names of the tools
// the plugins that would load registered the last time they loaded; for a plugin
// not loaded since it changed, the tools its manifest says it provides.
func (m *Manager) CachedToolNames() []string {
	cache, _ := m.readCLICache()
	var names []string
	for _, p := range m.Plugins() {
		if !p.Decision.Starts() || m.SafeMode() {
			continue
		}
		if e, ok := cache.Plugins[p.Key]; ok && e.Stamp == pluginStamp(p, m.opts.HostVersion) {
			names = append(names, e.Tools...)
		} else if p.Candidate.Manifest != nil {
			names = append(names, p.Candidate.Manifest.ProvidesTools...)
		}
	}
	sort.Strings(names)
	return names
}
