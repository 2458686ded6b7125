package skills

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/hermes-go/hermes/internal/jsonx"
)

// The model's results: upstream's skills_list and skill_view JSON
// (tools/skills_tool.py), with hermes' withheld result for a skill the
// prompt-injection rules flag.

type listEntry struct {
	Name        string  `json:"name"`
	Description string  `json:"description"`
	Category    *string `json:"category"`
}

type listResult struct {
	Success    bool        `json:"success"`
	Skills     []listEntry `json:"skills"`
	Categories []string    `json:"categories"`
	Count      *int        `json:"count,omitempty"`
	Hint       string      `json:"hint,omitempty"`
	Message    string      `json:"message,omitempty"`
}

// ListJSON is skills_list: the user skills (name, description, category)
// that can be served. Plugin skills are not listed (as upstream: they are
// addressed explicitly as "<namespace>:<name>"), nor are skills withheld for
// injection findings or broken frontmatter: their text must not reach the
// model, the description included.
func (c *Catalog) ListJSON(ctx context.Context, category string) string {
	user, err := c.User()
	if err != nil {
		return failure(err.Error(), nil)
	}
	res := listResult{Success: true, Skills: []listEntry{}, Categories: []string{}}
	cats := map[string]bool{}
	for _, s := range user {
		if s.Problem != "" || (category != "" && s.Category != category) {
			continue
		}
		if f, err := Injection(ctx, s.Path); err != nil || len(f) > 0 {
			continue
		}
		e := listEntry{Name: s.Name, Description: s.Description}
		if s.Category != "" {
			cat := s.Category
			e.Category = &cat
			cats[cat] = true
		}
		res.Skills = append(res.Skills, e)
	}
	for k := range cats {
		res.Categories = append(res.Categories, k)
	}
	sort.Strings(res.Categories)
	if len(res.Skills) == 0 {
		res.Message = "No skills found in " + c.UserDir + "."
	} else {
		n := len(res.Skills)
		res.Count = &n
		res.Hint = "Use skill_view(name) to see full content, tags, and linked files"
	}
	return marshal(res)
}

type viewResult struct {
	Success         bool                `json:"success"`
	Name            string              `json:"name"`
	File            string              `json:"file,omitempty"`
	Description     string              `json:"description"`
	Tags            []string            `json:"tags"`
	RelatedSkills   []string            `json:"related_skills"`
	Content         string              `json:"content"`
	Path            string              `json:"path"`
	SkillDir        string              `json:"skill_dir"`
	LinkedFiles     map[string][]string `json:"linked_files"`
	UsageHint       *string             `json:"usage_hint"`
	ReadinessStatus string              `json:"readiness_status"`
	Metadata        map[string]any      `json:"metadata,omitempty"`
}

// ViewJSON is skill_view: the skill's SKILL.md (or its linked file
// filePath), unless the prompt-injection rules flag it.
func (c *Catalog) ViewJSON(ctx context.Context, name, filePath string) string {
	name = strings.TrimSpace(name)
	if name == "" {
		return failure("skill_view needs a name: call skills_list to see the available skills.", nil)
	}
	if ns, bare, ok := strings.Cut(name, ":"); ok && !validNamespace(ns) {
		return failure(fmt.Sprintf("Invalid namespace '%s' in '%s'. Namespaces must match [a-zA-Z0-9_-]+.", ns, name), nil)
	} else if ok && bare == "" {
		return failure(fmt.Sprintf("Skill name '%s' has no skill after the namespace; use '%s:<skill>'.", name, ns), nil)
	}
	s, err := c.Find(name)
	if errors.Is(err, ErrNotFound) {
		return c.notFound(name)
	}
	if err != nil {
		return failure(err.Error(), nil)
	}
	if s.Problem != "" {
		return failure(fmt.Sprintf("Skill '%s' cannot be loaded: %s. Fix %s.", s.Name, s.Problem, s.Path), nil)
	}
	content, err := s.Read(ctx, filePath)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return failure(fmt.Sprintf("File '%s' not found in skill '%s'.", filePath, s.Name),
				map[string]any{"available_files": s.LinkedFiles(), "hint": "Use one of the available file paths listed above"})
		}
		return failure(fmt.Sprintf("Failed to read skill '%s': %v", s.Name, err), nil)
	}
	if len(content.Findings) > 0 {
		return withheld(s, filePath, content.Findings)
	}
	return marshal(c.viewOf(s, filePath, content.Text))
}

func (c *Catalog) viewOf(s *Skill, filePath, text string) viewResult {
	res := viewResult{Success: true, Name: s.Name, Content: text, Path: s.Path, SkillDir: s.Dir,
		ReadinessStatus: "available", Tags: []string{}, RelatedSkills: []string{}}
	if filePath != "" {
		res.File = filePath
	}
	fm := s.Frontmatter
	if s.Plugin != "" {
		res.Description = s.Description
		ns, _, _ := strings.Cut(s.Name, ":")
		res.Content = c.bundleNote(ns, s.Name) + text
		return res
	}
	res.Description = str(fm, "description")
	meta, _ := fm["metadata"].(map[string]any)
	hm, _ := meta["hermes"].(map[string]any)
	res.Tags = list(first(hm["tags"], fm["tags"]))
	res.RelatedSkills = list(first(hm["related_skills"], fm["related_skills"]))
	if filePath == "" {
		res.LinkedFiles = s.LinkedFiles()
		if res.LinkedFiles != nil {
			hint := "To view linked files, call skill_view(name, file_path) where file_path is e.g. 'references/api.md' or 'assets/config.yaml'"
			res.UsageHint = &hint
		}
	}
	res.Metadata = meta
	return res
}

// bundleNote tells the model which plugin a skill comes from and its
// sibling skills, which it can only reach by their qualified names.
func (c *Catalog) bundleNote(ns, self string) string {
	var sib []string
	for _, p := range c.Plugin() {
		if strings.HasPrefix(p.Name, ns+":") && p.Name != self {
			sib = append(sib, p.Name)
		}
	}
	if len(sib) == 0 {
		return fmt.Sprintf("[This skill comes from the plugin namespace '%s'.]\n\n", ns)
	}
	return fmt.Sprintf("[This skill comes from the plugin namespace '%s'. Its other skills: %s.]\n\n", ns, strings.Join(sib, ", "))
}

func first(a, b any) any {
	if a != nil {
		return a
	}
	return b
}

func (c *Catalog) notFound(name string) string {
	if ns, bare, ok := strings.Cut(name, ":"); ok {
		var avail []string
		for _, p := range c.Plugin() {
			if strings.HasPrefix(p.Name, ns+":") {
				avail = append(avail, p.Name)
			}
		}
		if len(avail) > 0 {
			return failure(fmt.Sprintf("Skill '%s' not found in plugin '%s'.", bare, ns),
				map[string]any{"available_skills": avail, "hint": fmt.Sprintf("The '%s' plugin provides %d skill(s).", ns, len(avail))})
		}
	}
	avail := []string{}
	user, _ := c.User()
	for _, s := range user {
		if s.Problem == "" && len(avail) < 20 {
			avail = append(avail, s.Name)
		}
	}
	return failure(fmt.Sprintf("Skill '%s' not found.", name),
		map[string]any{"available_skills": avail, "hint": "Use skills_list to see all available skills"})
}

// withheld is the result for a skill file with prompt-injection findings:
// the rules that matched and where, never the matched text.
func withheld(s *Skill, filePath string, fs []Finding) string {
	file := "SKILL.md"
	if filePath != "" {
		file = filePath
	}
	var ids []string
	for _, f := range fs {
		ids = append(ids, fmt.Sprintf("%s (line %d)", f.PatternID, f.Line))
	}
	msg := fmt.Sprintf("Skill '%s' was withheld: its %s matches the prompt-injection rules %s, so hermes does not pass it to the model. Tell the user; they can review %s and fix or remove it.",
		s.Name, file, strings.Join(ids, ", "), s.Path)
	return failure(msg, map[string]any{"withheld": true, "findings": fs})
}

// failure is upstream's error result: success false, the error, and extras
// (sorted by key).
func failure(msg string, extra map[string]any) string {
	b := strings.Builder{}
	b.WriteString(`{"success": false, "error": `)
	b.WriteString(marshal(msg))
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.WriteString(", " + marshal(k) + ": " + marshal(extra[k]))
	}
	b.WriteString("}")
	return b.String()
}

func marshal(v any) string {
	b, err := jsonx.Marshal(v)
	if err != nil {
		return `{"success": false, "error": "could not encode the result"}`
	}
	return string(b)
}

func validNamespace(ns string) bool {
	if ns == "" {
		return false
	}
	for _, r := range ns {
		if !(r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
