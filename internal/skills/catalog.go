package skills

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hermes-go/hermes/internal/scan"
)

// Skill is one SKILL.md as hermes knows it.
type Skill struct {
	// Name is how skill_view addresses it: the frontmatter name (else the
	// directory name) of a user skill, "<namespace>:<name>" of a plugin's.
	Name        string
	Description string
	Version     string
	Category    string // the user skill's category directory, "" at the top
	Path        string // the SKILL.md
	Dir         string // the skill directory (linked files live under it)
	// Plugin is the key of the plugin that registered it, "" for a user skill.
	Plugin string
	// Frontmatter is the parsed mapping (nil without frontmatter).
	Frontmatter map[string]any
	// Problem says why the skill cannot be served (its frontmatter is broken,
	// the file is unreadable); "" when it can.
	Problem string
}

// Registered is a skill a plugin registered (registry.Skill, as the catalog
// needs it).
type Registered struct {
	Name        string // "<namespace>:<name>"
	Path        string
	Description string
	Plugin      string
}

// Catalog is every skill of one command.
type Catalog struct {
	// UserDir is $HERMES_HOME/skills ("" for none).
	UserDir string
	// Plugins returns the skills plugins registered (nil for none).
	Plugins func() []Registered
}

// User returns the user's skills, sorted by category then name:
// <UserDir>/<name>/SKILL.md and <UserDir>/<category>/<name>/SKILL.md. A
// skill whose SKILL.md cannot be read is returned with its Problem set.
func (c *Catalog) User() ([]*Skill, error) {
	if c.UserDir == "" {
		return nil, nil
	}
	entries, err := os.ReadDir(c.UserDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read skills directory: %w", err)
	}
	var out []*Skill
	for _, e := range entries {
		if hidden(e.Name()) || !isDir(c.UserDir, e) {
			continue
		}
		dir := filepath.Join(c.UserDir, e.Name())
		if fileExists(filepath.Join(dir, "SKILL.md")) {
			out = append(out, loadUser(dir, ""))
			continue
		}
		subs, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, s := range subs {
			if !hidden(s.Name()) && isDir(dir, s) && fileExists(filepath.Join(dir, s.Name(), "SKILL.md")) {
				out = append(out, loadUser(filepath.Join(dir, s.Name()), e.Name()))
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Category != out[j].Category {
			return out[i].Category < out[j].Category
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

func loadUser(dir, category string) *Skill {
	s := &Skill{Name: filepath.Base(dir), Category: category, Dir: dir, Path: filepath.Join(dir, "SKILL.md")}
	data, err := readCapped(s.Path)
	if err != nil {
		s.Problem = err.Error()
		return s
	}
	fm, body, err := ParseFrontmatter(data)
	if err != nil {
		s.Problem = err.Error()
		return s
	}
	s.Frontmatter = fm
	if n := str(fm, "name"); n != "" {
		if strings.ContainsAny(n, ":/\\") || len(n) > 64 {
			s.Problem = fmt.Sprintf("frontmatter: name %q must be at most 64 characters without ':', '/' or '\\'", n)
			return s
		}
		s.Name = n
	}
	s.Version = str(fm, "version")
	s.Description = str(fm, "description")
	if s.Description == "" {
		s.Description = firstParagraphLine(body)
	}
	s.Description = cut(s.Description, maxDescription)
	return s
}

// maxDescription is upstream's MAX_DESCRIPTION_LENGTH.
const maxDescription = 1024

func cut(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-3]) + "..."
	}
	return s
}

func firstParagraphLine(body []byte) string {
	for _, l := range strings.Split(string(body), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			return l
		}
	}
	return ""
}

// Plugin returns the plugin skills, sorted by name.
func (c *Catalog) Plugin() []*Skill {
	if c.Plugins == nil {
		return nil
	}
	var out []*Skill
	for _, r := range c.Plugins() {
		out = append(out, &Skill{Name: r.Name, Description: cut(r.Description, maxDescription), Path: r.Path,
			Dir: filepath.Dir(r.Path), Plugin: r.Plugin})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// ErrNotFound is a name no skill has.
var ErrNotFound = errors.New("skill not found")

// Find returns the skill called name: "<namespace>:<name>" is a plugin skill
// (only so addressable, as upstream), anything else a user skill by name or
// by "<category>/<name>".
func (c *Catalog) Find(name string) (*Skill, error) {
	if strings.Contains(name, ":") {
		for _, s := range c.Plugin() {
			if s.Name == name {
				return s, nil
			}
		}
		return nil, fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	user, err := c.User()
	if err != nil {
		return nil, err
	}
	var hits []*Skill
	for _, s := range user {
		if s.Name == name || filepath.Base(s.Dir) == name || (s.Category != "" && s.Category+"/"+filepath.Base(s.Dir) == name) {
			hits = append(hits, s)
		}
	}
	switch len(hits) {
	case 0:
		return nil, fmt.Errorf("%w: %s", ErrNotFound, name)
	case 1:
		return hits[0], nil
	}
	var where []string
	for _, s := range hits {
		where = append(where, s.Category+"/"+filepath.Base(s.Dir))
	}
	return nil, fmt.Errorf("skill name %q is ambiguous: %d skills match (%s); use the category/name form", name, len(hits), strings.Join(where, ", "))
}

// Finding is a prompt-injection match in a skill file.
type Finding struct {
	PatternID   string `json:"pattern_id"`
	Line        int    `json:"line"`
	Description string `json:"description"`
}

// Injection scans one file with the install scanner's prompt-injection rules.
func Injection(ctx context.Context, path string) ([]Finding, error) {
	res, err := scan.Scan(ctx, path, scan.Options{Source: "skill"})
	if err != nil {
		return nil, err
	}
	var out []Finding
	for _, f := range res.Findings {
		if f.Category == "injection" {
			out = append(out, Finding{PatternID: f.PatternID, Line: f.Line, Description: f.Description})
		}
	}
	return out, nil
}

// Content is a skill file read for the model.
type Content struct {
	Text     string
	Findings []Finding // prompt-injection findings: the text must not reach the model
}

// Read reads the skill's SKILL.md, or its linked file rel when rel is not
// "", and scans it. rel must stay inside the skill directory.
func (s *Skill) Read(ctx context.Context, rel string) (*Content, error) {
	path := s.Path
	if rel != "" {
		p, err := s.linked(rel)
		if err != nil {
			return nil, err
		}
		path = p
	}
	data, err := readCapped(path)
	if err != nil {
		return nil, err
	}
	findings, err := Injection(ctx, path)
	if err != nil {
		return nil, err
	}
	return &Content{Text: string(data), Findings: findings}, nil
}

// linked resolves a linked file of the skill, refusing a path that leaves
// the skill directory (.., absolute, or through a symlink).
func (s *Skill) linked(rel string) (string, error) {
	clean := filepath.Clean(filepath.FromSlash(rel))
	if filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("file_path %q leaves the skill directory; use a path relative to it, such as references/api.md", rel)
	}
	p := filepath.Join(s.Dir, clean)
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%w: file %q is not in skill %s", fs.ErrNotExist, rel, s.Name)
		}
		return "", err
	}
	root, err := filepath.EvalSymlinks(s.Dir)
	if err != nil {
		return "", err
	}
	if real != root && !strings.HasPrefix(real, root+string(filepath.Separator)) {
		return "", fmt.Errorf("file_path %q resolves outside the skill directory; refusing it", rel)
	}
	return real, nil
}

// LinkedFiles lists the skill's files besides SKILL.md by upstream's kinds
// (references, templates, assets, scripts), nil when there are none.
func (s *Skill) LinkedFiles() map[string][]string {
	out := map[string][]string{}
	for _, kind := range []string{"references", "templates", "assets", "scripts"} {
		root := filepath.Join(s.Dir, kind)
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || hidden(d.Name()) {
				return nil
			}
			rel, _ := filepath.Rel(s.Dir, p)
			out[kind] = append(out[kind], filepath.ToSlash(rel))
			return nil
		})
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func readCapped(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", filepath.Base(path), unwrapPath(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", filepath.Base(path))
	}
	data, err := io.ReadAll(io.LimitReader(f, maxSkillBytes+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", filepath.Base(path), err)
	}
	if len(data) > maxSkillBytes {
		return nil, fmt.Errorf("%s is larger than 1 MiB; a skill file is a few KiB: split it into linked files", filepath.Base(path))
	}
	return data, nil
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func hidden(name string) bool { return strings.HasPrefix(name, ".") }

func isDir(parent string, e fs.DirEntry) bool {
	if e.IsDir() {
		return true
	}
	if e.Type()&fs.ModeSymlink != 0 {
		st, err := os.Stat(filepath.Join(parent, e.Name()))
		return err == nil && st.IsDir()
	}
	return false
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
