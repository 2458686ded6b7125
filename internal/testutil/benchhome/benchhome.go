// Package benchhome writes the HERMES_HOME that bench/plugins-list.sh builds, so
// that in-process benchmarks measure the same manifests and config.yaml as the
// whole-command timing. Keep the two in step.
package benchhome

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

var (
	words = []string{"search", "notes", "github", "weather", "calendar", "translate", "summarize", "jira", "slack", "metrics",
		"docker", "k8s", "sql", "pdf", "images", "audio", "rss", "finance", "maps", "email"}
	hooks = []string{"pre_tool_call", "post_tool_call", "pre_llm_call", "post_llm_call", "on_session_start", "on_session_end"}
)

func title(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// Name is plugin i's directory and manifest name (1-based, as in the script).
func Name(i int) string { return fmt.Sprintf("%s-tools-%03d", words[i%len(words)], i) }

// Manifest is plugin i's plugin.yaml.
func Manifest(i int) string {
	w := words[i%len(words)]
	name := Name(i)
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\n", name)
	fmt.Fprintf(&b, "version: \"1.%d.%d\"\n", i%7, i)
	fmt.Fprintf(&b, "description: \"%s helpers for Hermes: lookup, sync and summaries (plugin %d)\"\n", title(w), i)
	fmt.Fprintf(&b, "author: Example Dev <dev%d@example.org>\n", i)
	b.WriteString("kind: standalone\n")
	fmt.Fprintf(&b, "tags: [%s, productivity, example]\n", w)
	if i%3 == 0 {
		b.WriteString("requires_env:\n")
		fmt.Fprintf(&b, "  - name: %s_API_KEY\n", strings.ToUpper(w))
		fmt.Fprintf(&b, "    description: API key for the %s service\n", w)
		b.WriteString("    secret: true\n")
	} else {
		fmt.Fprintf(&b, "requires_env: [%s_TOKEN]\n", strings.ToUpper(w))
	}
	fmt.Fprintf(&b, "provides_tools: [%s_lookup_%d, %s_sync_%d]\n", w, i, w, i)
	fmt.Fprintf(&b, "provides_hooks: [%s]\n", hooks[i%len(hooks)])
	if i%4 == 0 {
		b.WriteString("requires_hermes: \">=0.1\"\n")
	}
	if i%5 == 0 {
		b.WriteString("manifest_version: 2\nlicense: MIT\n")
	}
	fmt.Fprintf(&b, "homepage: https://example.org/hermes-plugins/%s\n", name)
	return b.String()
}

func initPy(i int) string {
	w := words[i%len(words)]
	name := Name(i)
	return fmt.Sprintf(`"""%[1]s: %[2]s helpers."""
import json


def register(ctx):
    schema = {
        "name": "%[2]s_lookup_%[3]d",
        "description": "Look something up in %[2]s.",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    }

    def lookup(params, **kwargs):
        return json.dumps({"success": True, "query": params.get("query", "")})

    ctx.register_tool(name="%[2]s_lookup_%[3]d", toolset="%[2]s", schema=schema, handler=lookup)
`, name, w, i)
}

// Config is the fixture's config.yaml: every tenth plugin enabled, every
// fortieth from the first disabled.
func Config(n int) string {
	var enabled, disabled []string
	for i := 1; i <= n; i++ {
		if i%10 == 0 {
			enabled = append(enabled, Name(i))
		}
		if i%40 == 1 {
			disabled = append(disabled, Name(i))
		}
	}
	return "# bench fixture\nplugins:\n  enabled: [" + strings.Join(enabled, ", ") + "]\n  disabled: [" + strings.Join(disabled, ", ") + "]\n"
}

// Write creates home/plugins with n plugins and home/config.yaml.
func Write(home string, n int) error {
	for i := 1; i <= n; i++ {
		dir := filepath.Join(home, "plugins", Name(i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "plugin.yaml"), []byte(Manifest(i)), 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "__init__.py"), []byte(initPy(i)), 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(home, "config.yaml"), []byte(Config(n)), 0o644)
}
