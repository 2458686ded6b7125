package plugins

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/hermes-go/hermes/internal/plugins/manifest"
	"github.com/hermes-go/hermes/internal/plugins/registry"
	"github.com/hermes-go/hermes/internal/skills"
)

// startPortable "starts" a portable package (plugin.json): no process runs;
// each skills/<name>/SKILL.md is registered under the package's skill
// namespace, as upstream's loader calls register_skill for it. A skill whose
// directory name is not a valid skill name, or whose frontmatter is broken,
// is left out with a warning; the rest still register. Its mcp.json servers
// are read by the MCP client's config (PortableServers), not here.
func (m *Manager) startPortable(p *Plugin) error {
	c := p.Candidate
	ns := c.Manifest.SkillNamespace
	if ns == "" {
		ns = manifest.PortableNamespace(c.Manifest.Name, c.Key)
	}
	root := filepath.Join(c.Dir, "skills")
	entries, err := os.ReadDir(root)
	if err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("read %s: %w", root, err)
	}
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || name[0] == '.' {
			continue
		}
		path := filepath.Join(root, name, "SKILL.md")
		data, err := os.ReadFile(path)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			m.warnFor(p, "plugin %s: skill %s left out: %v", p.Key, name, err)
			continue
		}
		if !skillName(name) {
			m.warnFor(p, "plugin %s: skill directory %q left out: a skill name must match [a-zA-Z0-9_-]+", p.Key, name)
			continue
		}
		fm, _, err := skills.ParseFrontmatter(data)
		if err != nil {
			m.warnFor(p, "plugin %s: skill %s left out: %s: %v", p.Key, name, path, err)
			continue
		}
		desc, _ := fm["description"].(string)
		m.reg.AddSkill(p.Key, registry.Skill{Name: ns + ":" + name, Path: path, Description: desc})
	}
	return nil
}

func skillName(s string) bool {
	for _, r := range s {
		if !(r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

// PortableMCP is the MCP servers of one loaded portable package: mcp.json's
// servers, each to be named "<skill namespace>__<server>".
type PortableMCP struct {
	Plugin    string // the plugin key
	Namespace string
	Servers   []manifest.PortableServer
}

// PortableServers reads the mcp.json of every enabled portable package,
// sorted by key. A package whose mcp.json is broken contributes no servers
// and a warning (its skills are unaffected); a bad server entry is a warning
// and only that server is left out.
func (m *Manager) PortableServers() ([]PortableMCP, []string) {
	var out []PortableMCP
	var warns []string
	for _, p := range m.Plugins() {
		c := p.Candidate
		if p.Runtime != RuntimePortable || !p.Decision.Load || c.Manifest == nil {
			continue
		}
		servers, ws, err := manifest.LoadPortableMCP(c.Dir)
		for _, w := range ws {
			warns = append(warns, fmt.Sprintf("plugin %s: %s", p.Key, w))
		}
		if err != nil {
			warns = append(warns, fmt.Sprintf("plugin %s: MCP servers not used: %v", p.Key, err))
			continue
		}
		if len(servers) > 0 {
			out = append(out, PortableMCP{Plugin: p.Key, Namespace: c.Manifest.SkillNamespace, Servers: servers})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Plugin < out[j].Plugin })
	return out, warns
}
