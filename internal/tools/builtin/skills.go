package builtin

import (
	"context"
	"fmt"

	"github.com/hermes-go/hermes/internal/tools"
)

// Skill tool and toolset names (upstream's).
const (
	SkillsList    = "skills_list"
	SkillView     = "skill_view"
	ToolsetSkills = "skills"
)

// Skills serves the skill tools' results (internal/skills.Catalog): JSON
// strings in upstream's shapes, errors included, so the model reads one format.
type Skills interface {
	ListJSON(ctx context.Context, category string) string
	ViewJSON(ctx context.Context, name, filePath string) string
}

// The descriptions are ours; the names, parameters and toolset are upstream's
// so models trained on Hermes call them correctly.
var skillsListSchema = map[string]any{
	"name":        SkillsList,
	"description": "List the skills installed for this user (name, description, category). Load one with skill_view(name).",
	"parameters": map[string]any{
		"type": "object",
		"properties": map[string]any{
			"category": map[string]any{"type": "string", "description": "Only list skills of this category"},
		},
		"required": []any{},
	},
}

var skillViewSchema = map[string]any{
	"name": SkillView,
	"description": "Load a skill: instructions for a task or workflow, with linked references, templates and scripts. " +
		"The first call returns SKILL.md and a 'linked_files' map; call again with file_path to read one of those files.",
	"parameters": map[string]any{
		"type": "object",
		"properties": map[string]any{
			"name": map[string]any{"type": "string", "description": "The skill's name, as skills_list shows it. " +
				"A plugin's skill is named '<namespace>:<skill>' and is not listed; use the qualified name you were given."},
			"file_path": map[string]any{"type": "string", "description": "Optional: a linked file of the skill, relative to its directory " +
				"(e.g. 'references/api.md'). Leave it out to get SKILL.md."},
		},
		"required": []any{"name"},
	},
}

// RegisterSkills adds skills_list and skill_view (toolset "skills") over s.
func RegisterSkills(reg *tools.Registry, s Skills) error {
	for _, tool := range []*tools.Tool{
		{Name: SkillsList, Toolset: ToolsetSkills, Emoji: "📚", Schema: skillsListSchema,
			Handler: func(ctx context.Context, args, _ map[string]any) (string, error) {
				cat, err := strArg(args, "category", false)
				if err != nil {
					return badArgs(SkillsList, err)
				}
				return s.ListJSON(ctx, cat), nil
			}},
		{Name: SkillView, Toolset: ToolsetSkills, Emoji: "📚", Schema: skillViewSchema,
			Handler: func(ctx context.Context, args, _ map[string]any) (string, error) {
				name, err := strArg(args, "name", true)
				if err != nil {
					return badArgs(SkillView, err)
				}
				file, err := strArg(args, "file_path", false)
				if err != nil {
					return badArgs(SkillView, err)
				}
				return s.ViewJSON(ctx, name, file), nil
			}},
	} {
		tool.Source = tools.SourceBuiltin
		if err := reg.Register(tool, false); err != nil {
			return fmt.Errorf("register built-in tool %s: %w", tool.Name, err)
		}
	}
	return nil
}
