// Package manifest reads a plugin's plugin.yaml (or plugin.yml).
//
// Parsing follows the upstream Hermes rules: a field of the wrong type is
// reported as a warning and falls back to its default, and only a file that
// is not YAML at all (or not a mapping) fails. Warnings are complete
// sentences that name the manifest file and the field.
//
// Unknown top-level fields are listed in Manifest.UnknownFields. Upstream
// logs them at debug level for manifest_version 1 and warns for version 2 or
// later; Parse returns the warning for version 2+ and leaves debug reporting
// of version 1 files to the caller.
package manifest

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hermes-go/hermes/internal/home"
	"github.com/hermes-go/hermes/internal/limits"
)

// EnvVar is one requires_env / optional_env entry.
type EnvVar struct {
	Name        string
	Description string
	URL         string
	Secret      bool
}

// Requirement is one requires_plugins entry. VersionRange is recorded but,
// as upstream, not enforced.
type Requirement struct {
	ID           string
	VersionRange string
}

// SchemaField is one config_schema entry.
type SchemaField struct {
	Type        string
	Default     any
	HasDefault  bool
	Description string
	Required    bool
}

// Manifest is a parsed plugin.yaml.
type Manifest struct {
	Name        string
	Version     string
	Description string
	Author      string

	RequiresEnv   []EnvVar
	OptionalEnv   []EnvVar
	ProvidesTools []string
	ProvidesHooks []string

	// Kind is standalone, backend, exclusive, platform or model-provider.
	// Parse leaves it "" when the file has no kind; LoadDir then detects it
	// from __init__.py (DetectKind) and defaults to standalone.
	Kind string

	ManifestVersion    int // 1 when absent
	APIVersion         *int
	RequiresPlugins    []Requirement
	PythonDependencies []string
	ConfigSchema       map[string]SchemaField
	License            string
	Homepage           string
	Tags               []string
	// Capabilities holds only known ids (KnownCapability), deduplicated in
	// declaration order.
	Capabilities   []string
	Emits          []string
	Listens        []string
	RequiresHermes string
	UpdateURL      string

	// Runtime is "python" or "exec". Parse leaves it "" when the file has
	// none; LoadDir defaults it to "python".
	Runtime string
	// Command is the argv of an exec plugin. A relative argv[0] is resolved
	// against the plugin directory by the runtime, not here.
	Command []string

	// Portable marks a plugin.json package (Agent Plugins v1): no process runs;
	// its skills and MCP servers are what it provides.
	Portable bool
	// SkillNamespace is the namespace of the plugin's skills
	// ("<namespace>:<skill>"): discovery sets it for a portable package
	// (PortableNamespace); "" means the manifest name, as upstream.
	SkillNamespace string

	// Raw is the whole decoded document, handed to plugins as ctx.manifest.
	Raw map[string]any
	// File is the path of the manifest file.
	File string
	// UnknownFields lists top-level fields this host does not know, sorted.
	UnknownFields []string
}

// ErrNoManifest is returned by LoadDir when a directory has neither
// plugin.yaml nor plugin.yml.
var ErrNoManifest = errors.New("no plugin.yaml or plugin.yml")

// ManifestFiles are the manifest names LoadDir looks for, in order.
var ManifestFiles = []string{"plugin.yaml", "plugin.yml"}

// SupportedManifestVersion is the newest manifest format this host knows.
const SupportedManifestVersion = 2

// maxManifestSize bounds what LoadDir reads: a manifest is a few hundred
// bytes, and a runaway file must not stall discovery.
var maxManifestSize = limits.Manifest.MaxBytes

// kindProbeSize is how much of __init__.py the kind detection reads, as upstream.
const kindProbeSize = 8192

// knownFields are the upstream manifest fields plus update_url (read by
// install) and this host's runtime and command.
var knownFields = map[string]bool{
	"name": true, "version": true, "description": true, "author": true, "requires_env": true,
	"provides_tools": true, "provides_hooks": true, "kind": true, "hooks": true, "label": true,
	"optional_env": true, "platforms": true, "external_dependencies": true, "pip_dependencies": true,
	"provides_browser_providers": true, "provides_web_providers": true, "manifest_version": true,
	"api_version": true, "requires_plugins": true, "python_dependencies": true, "config_schema": true,
	"license": true, "homepage": true, "tags": true, "capabilities": true, "emits": true,
	"listens": true, "hermes": true, "depends": true, "requires_hermes": true,
	"update_url": true, "runtime": true, "command": true,
}

// LoadDir reads the manifest of the plugin directory dir: the first of
// plugin.yaml and plugin.yml. It returns an error wrapping ErrNoManifest when
// neither exists. Beyond Parse it settles Kind (auto-detected from the first
// 8192 bytes of __init__.py when the file declares none) and Runtime.
func LoadDir(dir string) (*Manifest, []string, error) {
	var data []byte
	var file string
	for _, name := range ManifestFiles {
		path := filepath.Join(dir, name)
		b, err := readFileLimit(path, maxManifestSize)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("read plugin manifest: %w", err)
		}
		data, file = b, path
		break
	}
	if file == "" {
		return nil, nil, fmt.Errorf("%s: %w", dir, ErrNoManifest)
	}
	m, warns, err := Parse(data, file, filepath.Base(dir))
	if err != nil {
		return nil, warns, err
	}
	if m.Kind == "" {
		src, err := readInit(dir)
		if err != nil {
			return nil, warns, err
		}
		if m.Kind = DetectKind(src); m.Kind == "" {
			m.Kind = "standalone"
		}
	}
	// Every plugin that is not an exec plugin is a Python package. Whether its
	// __init__.py exists is left to load time ("No __init__.py in <dir>"), which keeps
	// a stat per plugin out of `plugins list`.
	if m.Runtime == "" {
		m.Runtime = "python"
	}
	return m, warns, nil
}

// readInit returns the head of dir/__init__.py. Only an __init__.py that is not
// a regular file is an error (the plugin cannot be imported from it); a missing
// or unreadable one is left to load time, which reports the real problem.
func readInit(dir string) (string, error) {
	var buf [kindProbeSize]byte
	n, err := readHead(filepath.Join(dir, "__init__.py"), buf[:])
	if err != nil {
		if nr := (*home.NotRegularError)(nil); errors.As(err, &nr) {
			return "", err
		}
		return "", nil
	}
	return string(buf[:n]), nil
}

// DetectKind applies upstream's source markers to the head of a plugin's
// __init__.py: memory-provider markers mean "exclusive", register_provider
// with ProviderProfile means "model-provider". It returns "" otherwise.
func DetectKind(source string) string {
	if strings.Contains(source, "register_memory_provider") || strings.Contains(source, "MemoryProvider") {
		return "exclusive"
	}
	if strings.Contains(source, "register_provider") && strings.Contains(source, "ProviderProfile") {
		return "model-provider"
	}
	return ""
}

// Parse decodes one manifest. file is used in messages and kept in
// Manifest.File; dirName is the plugin directory's name, the default for
// name. Problems with single fields come back as warnings; the error is for a
// file that cannot be used at all (invalid YAML, *SyntaxError, naming the
// file and line; runtime exec without a command).
func Parse(data []byte, file, dirName string) (*Manifest, []string, error) {
	data = trimBOM(data)
	// Before any parser: a hostile file must cost this plugin, not the host's memory.
	if err := limits.CheckYAML(data, file, limits.Manifest); err != nil {
		return nil, nil, err
	}
	d, err := decodeYAML(data, file)
	if err != nil {
		return nil, nil, err
	}
	p := &fieldParser{file: file, raw: d.Doc, lit: d.Lit}
	for _, dup := range d.Dups {
		p.warnf("field %q appears more than once (lines %d and %d); the last one is used, remove the other", dup.Key, dup.First, dup.Last)
	}
	m := &Manifest{Raw: d.Doc, File: file}

	m.Name = p.name(dirName)
	m.Version = p.str("version")
	m.Description = p.str("description")
	m.Author = p.author()
	m.RequiresEnv = p.envList("requires_env")
	m.OptionalEnv = p.envList("optional_env")
	m.ProvidesTools = p.strList("provides_tools")
	m.ProvidesHooks = p.strList("provides_hooks")
	m.Kind = p.kind()
	m.ManifestVersion = p.manifestVersion()
	m.APIVersion = p.apiVersion()
	m.RequiresPlugins = p.requirements()
	m.PythonDependencies = p.pythonDeps()
	m.ConfigSchema = p.configSchema()
	m.License = p.str("license")
	m.Homepage = p.str("homepage")
	m.Tags = p.strList("tags")
	m.Capabilities = p.capabilities()
	m.Emits = p.strList("emits")
	m.Listens = p.strList("listens")
	m.RequiresHermes = strings.TrimSpace(p.str("requires_hermes"))
	m.UpdateURL = strings.TrimSpace(p.str("update_url"))
	m.Runtime = p.runtime()
	m.Command = p.command()

	for k := range d.Doc {
		if !knownFields[k] {
			m.UnknownFields = append(m.UnknownFields, k)
		}
	}
	sort.Strings(m.UnknownFields)
	if len(m.UnknownFields) > 0 && m.ManifestVersion >= 2 {
		p.warnf("unknown manifest field(s) ignored: %s (newer manifest schema or a typo; the plugin still loads)", strings.Join(m.UnknownFields, ", "))
	}

	switch {
	case m.Runtime == "exec" && len(m.Command) == 0:
		return nil, p.warns, fmt.Errorf("%s: runtime exec needs a command, e.g. command: [./my-plugin]; add one or remove runtime", file)
	case m.Runtime != "exec" && len(m.Command) > 0:
		p.warnf("command is only used with runtime: exec; add runtime: exec or remove command")
	}
	return m, p.warns, nil
}

func trimBOM(b []byte) []byte {
	if len(b) >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF {
		return b[3:]
	}
	return b
}

// ValidDirName reports whether name can key a plugin directory: not empty,
// not "." or "..", and free of path separators and NUL.
func ValidDirName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/\\\x00")
}
