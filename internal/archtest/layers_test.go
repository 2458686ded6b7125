// Package archtest holds the tests of how hermes' packages depend on each
// other: the tiers of docs/ARCHITECTURE.md, one way only.
package archtest

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/hermes-go/hermes/"

// tiers places every package of the module: a package may import only packages
// of a lower tier. A new package gets a row here; where it goes is where it
// stands in docs/ARCHITECTURE.md's package map.
var tiers = map[string]int{
	// 0: leaves, no hermes imports.
	"internal/clock": 0, "internal/jsonx": 0, "internal/lazyre": 0, "internal/startmem": 0,
	"internal/plugins/pybridge": 0, "internal/plugins/manifest/internal/yamlfast": 0, "internal/termsafe": 0,
	"internal/reaper": 0, // process containment: cgroups, the subreaper, non-dumpable
	"internal/redact": 0, // secret masking: built-in rules, plugin patterns, the prefilter
	"internal/limits": 0, // size, depth and value caps checked before any parser runs
	"examples":        0, // the example plugins' files, embedded
	// 1: the wire, the clock-using basics.
	"internal/home": 1, "pkg/protocol": 1, "internal/catalog": 1, "internal/scan": 1,
	"internal/urlscheme": 1, "internal/llm": 1, "internal/logs": 1, "internal/hooks": 1,
	"internal/gateway/platform": 1, // what the gateway and its platform adapters share
	"internal/gateway/service":  1, // the systemd unit, systemctl, the gateway's pid file
	// 2: what plugins and tools are.
	"internal/plugins/manifest": 2, "internal/tools": 2, "internal/session": 2, "pkg/pluginsdk": 2,
	"internal/plugins/runtime/pipeio": 2, "internal/protocoltest": 2, "internal/llm/llmtest": 2,
	"internal/cluster":       2, // PostgreSQL queue, leases, leader election, membership (issue 19)
	"internal/skills":        2, // SKILL.md skills: frontmatter, the catalog, skills_list/skill_view results
	"internal/shellhooks":    2, // config.yaml's hooks: commands, their consent and how they run
	"internal/pluginsui":     2, // the `hermes plugins` screen (Bubble Tea; rows in, picks out)
	"internal/chatui/editor": 2, // the chat's input line editor (Bubble Tea component, history file)
	// streamed markdown of the chat: blocks rendered once, only the open one again (termsafe only)
	"internal/chatui/mdstream": 2,
	// Platform adapters: the seam and leaves only (gateway_test.go).
	"internal/gateway/discord":  2,
	"internal/gateway/telegram": 2, // the Telegram adapter (imports platform only)
	// the adapter proxy of a platform a plugin registered (platform, termsafe, the wire)
	"internal/gateway/pluginplatform": 2,
	// 3: config, discovery, processes, the registry.
	"internal/config": 3, "internal/plugins/discovery": 3, "internal/plugins/runtime": 3,
	"internal/plugins/registry": 3, "internal/bundled": 3,
	"internal/session/pgstore":   3, // the session store on PostgreSQL (pgx)
	"internal/session/storetest": 3, // the store's conformance suite, run on both engines
	"internal/memory/memctx":     1, // the <memory-context> block and its scrubbers
	"internal/memory":            4, // the built-in memory, the memory tool, an external provider around turns
	"internal/mcp/server":        3, // hermes as an MCP server: the tool set over the SDK
	// 4: policies and services over config.
	"internal/capability": 4, "internal/approval": 4, "internal/install": 4, "internal/agent": 4,
	"internal/plugins/runtime/python": 4,
	"internal/mcp":                    4, // MCP servers: config edits and links (and the client)
	// who may talk to the gateway and the pairing store (reads .env through config)
	"internal/gateway/auth": 4,
	// 5: the ctx facades, the built-in tools, packs.
	"internal/plugins/hostapi": 5, "internal/tools/builtin": 5, "internal/pack": 5,
	"internal/gateway": 5, // the runner: sessions, busy lanes, chat commands (over registry and auth)
	// how the terminal chat draws tool calls, diffs and the approval modal (termsafe, approval's choices)
	"internal/chatui/toolview": 5,
	// 6: the plugin manager (lifecycle).
	"internal/plugins": 6,
	"internal/chatui":  6, // the full-screen `hermes chat` (Bubble Tea; drives app.Chat through an interface)
	// 7: wiring; 8: verbs; 9: programs.
	"internal/app": 7,
	"internal/cli": 8,
	"cmd/hermes":   9, "internal/llm/llmtest/cmd/fakellm": 9, "bench/scangen": 9,
	"examples/plugins/go-shout": 9,
	"internal/nixtest":          9, // tests of nix/ that run the real hermes (cli.Main)
}

// cliImports are the packages the verbs may use besides internal/app: the data
// their output shows or their input takes, never the wiring.
var cliImports = []string{
	"internal/app", "examples",
	"internal/capability", "internal/catalog", "internal/config", "internal/home", "internal/install",
	"internal/jsonx", "internal/pack", "internal/plugins", "internal/plugins/manifest",
	"internal/plugins/registry", "internal/scan", "internal/session", "internal/tools", "internal/urlscheme",
	"internal/termsafe",   // how untrusted text is shown
	"internal/pluginsui",  // the screen `hermes plugins` shows on a terminal
	"internal/chatui",     // the full-screen chat `hermes chat` shows on a terminal
	"internal/skills",     // the skills `hermes skills list/show` shows
	"internal/mcp",        // the mcp_servers entries `mcp add/remove` and links write; the servers `mcp list/test/tools` show
	"internal/shellhooks", // the hooks `hooks list/test` show, the allowlist `hooks revoke` edits
	// the pairing store `hermes pairing` edits, and the source it checks a user with
	"internal/gateway/auth", "internal/gateway/platform",
	"internal/memory",  // the built-in store `hermes memory status` shows
	"internal/cluster", // the processes and queue `hermes gateway status` shows
}

type pkg struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
	GoFiles      []string
	Dir          string
}

func list(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = filepath.Join("..", "..")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		p.ImportPath = strings.TrimPrefix(p.ImportPath, module)
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func own(imports []string) []string {
	var out []string
	for _, i := range imports {
		if strings.HasPrefix(i, module) {
			out = append(out, strings.TrimPrefix(i, module))
		}
	}
	return out
}

// Every import goes down: no package imports one of its own tier or above.
func TestTiersOneWay(t *testing.T) {
	for _, p := range list(t) {
		if strings.HasPrefix(p.ImportPath, "internal/testutil/") || p.ImportPath == "internal/archtest" {
			continue
		}
		tier, ok := tiers[p.ImportPath]
		if !ok {
			t.Errorf("%s has no tier: add it to the table in this file (and to docs/ARCHITECTURE.md)", p.ImportPath)
			continue
		}
		for _, imp := range own(p.Imports) {
			if strings.HasPrefix(imp, "internal/testutil/") {
				t.Errorf("%s (not a test) imports %s", p.ImportPath, imp)
				continue
			}
			if it, ok := tiers[imp]; ok && it >= tier {
				t.Errorf("%s (tier %d) imports %s (tier %d): imports go to lower tiers only", p.ImportPath, tier, imp, it)
			}
		}
	}
}

// The verbs reach the wiring only through internal/app.
func TestCLIImportsAppAndOutputs(t *testing.T) {
	for _, p := range list(t) {
		if p.ImportPath != "internal/cli" {
			continue
		}
		for _, imp := range own(p.Imports) {
			if !slices.Contains(cliImports, imp) {
				t.Errorf("internal/cli imports %s: wiring belongs in internal/app (or, if it is what a verb shows, add it to cliImports)", imp)
			}
		}
		return
	}
	t.Fatal("internal/cli not found")
}

// No consumer names plugins.Manager: only the app builds one.
func TestOnlyAppNamesTheManager(t *testing.T) {
	for _, p := range list(t) {
		if p.ImportPath == "internal/plugins" || p.ImportPath == "internal/app" {
			continue
		}
		for _, f := range p.GoFiles {
			b, err := os.ReadFile(filepath.Join(p.Dir, f))
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(b, []byte("plugins.Manager")) {
				t.Errorf("%s/%s names plugins.Manager: consumers use the registry (or app.Host)", p.ImportPath, f)
			}
		}
	}
}
