package app

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/hermes-go/hermes/internal/scan"
	"github.com/hermes-go/hermes/internal/termsafe"
)

// Context files, as upstream loads them (agent/prompt_builder.py): SOUL.md in
// HERMES_HOME is the agent's identity, slot one of the system prompt; one
// project context file follows, the first of .hermes.md/HERMES.md (from the
// working directory up to the git root), AGENTS.md, CLAUDE.md, .cursorrules
// (the working directory only). Each is scanned for prompt injection first: a
// file that fails is left out and the user told why.
const (
	soulFile = "SOUL.md"
	// contextFileCap bounds one file in the system prompt, in characters
	// (upstream's 20 000: the head and the tail are kept, the middle marked cut).
	contextFileCap = 20000
)

// defaultIdentity is the identity without a usable SOUL.md, and the starter
// SOUL.md written when there is none.
const defaultIdentity = defaultSystemPrompt

// projectContextNames are the project files in upstream's order of precedence;
// walk marks those looked for from the working directory up to the git root.
var projectContextNames = []struct {
	names []string
	walk  bool
}{
	{[]string{".hermes.md", "HERMES.md"}, true},
	{[]string{"AGENTS.md"}, false},
	{[]string{"CLAUDE.md"}, false},
	{[]string{".cursorrules"}, false},
}

// WarmContextScan readies the prompt-injection scan the context files go
// through: its catalogue, matcher and the expressions a SOUL.md meets are
// built on first use, 1.5-2 ms that a chat opening a new session otherwise
// waits for. A chat runs it on a goroutine of its own while the host starts.
func WarmContextScan() { scan.PromptInjection(soulFile, []byte(defaultIdentity)) }

// systemPrompt builds the base system prompt for a new session: identity,
// then the project context file. warn receives what the user should know
// (a file left out, a starter written that could not be).
func systemPrompt(homeDir, cwd string, warn func(string)) string {
	parts := []string{loadSoul(homeDir, warn)}
	if name, text := loadProjectContext(cwd, warn); text != "" {
		parts = append(parts, "# Project Context\n\nThe following project context file has been loaded and should be followed:\n\n## "+name+"\n\n"+text)
	}
	return strings.Join(parts, "\n\n")
}

// loadSoul reads $HERMES_HOME/SOUL.md, writing the starter when there is none
// (never over an existing file); empty, unreadable or failing the scan, the
// built-in identity stands in.
func loadSoul(homeDir string, warn func(string)) string {
	path := filepath.Join(homeDir, soulFile)
	if f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
		_, werr := f.WriteString(defaultIdentity + "\n")
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			warn(fmt.Sprintf("could not write the starter %s: %v", path, werr))
		}
	} else if !errors.Is(err, fs.ErrExist) {
		warn(fmt.Sprintf("could not write the starter %s: %v (the built-in identity is used)", path, err))
		return defaultIdentity
	}
	text, ok := readContextFile(path, warn)
	if !ok || text == "" {
		return defaultIdentity
	}
	return text
}

// loadProjectContext finds and reads the one project context file; it
// returns its name as shown to the model and its text ("" for none).
func loadProjectContext(cwd string, warn func(string)) (string, string) {
	if cwd == "" {
		return "", ""
	}
	root := gitRoot(cwd)
	for _, group := range projectContextNames {
		for _, dir := range searchDirs(cwd, root, group.walk) {
			for _, name := range group.names {
				path := filepath.Join(dir, name)
				if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
					continue
				}
				// The first file found is the project's, even when it is left
				// out: a blocked AGENTS.md must not let CLAUDE.md stand in.
				text, ok := readContextFile(path, warn)
				if !ok {
					return "", ""
				}
				rel, err := filepath.Rel(cwd, path)
				if err != nil {
					rel = name
				}
				return rel, text
			}
		}
	}
	return "", ""
}

// searchDirs are the directories to look in: cwd alone, or (walk) cwd and
// its parents up to the git root, when cwd is inside a repository.
func searchDirs(cwd, root string, walk bool) []string {
	if !walk || root == "" {
		return []string{cwd}
	}
	var dirs []string
	for dir := cwd; ; dir = filepath.Dir(dir) {
		dirs = append(dirs, dir)
		if dir == root || filepath.Dir(dir) == dir {
			return dirs
		}
	}
}

// gitRoot is the nearest directory at or above dir holding .git, "" if none.
func gitRoot(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// readContextFile reads a context file, scans it for prompt injection and
// caps it; ok is false when it must not be loaded (the user was told).
func readContextFile(path string, warn func(string)) (string, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		warn(fmt.Sprintf("context file %s not loaded: %v", path, err))
		return "", false
	}
	if findings := scan.PromptInjection(filepath.Base(path), data); len(findings) > 0 {
		warn(fmt.Sprintf("context file %s not loaded: it failed the prompt-injection scan: %s; edit it if it is yours, or remove it",
			path, termsafe.Line(findings[0].Describe())))
		return "", false
	}
	return capContextFile(strings.TrimSpace(string(data)), filepath.Base(path)), true
}

// capContextFile keeps the head (70%) and the tail (20%) of an oversized file.
func capContextFile(s, name string) string {
	r := []rune(s)
	if len(r) <= contextFileCap {
		return s
	}
	head, tail := contextFileCap*7/10, contextFileCap*2/10
	return string(r[:head]) + fmt.Sprintf("\n\n[... %s truncated: %d of %d characters kept; read the file for the rest ...]\n\n", name, head+tail, len(r)) + string(r[len(r)-tail:])
}
