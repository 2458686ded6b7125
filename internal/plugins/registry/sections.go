package registry

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// System prompt sections (upstream §11.2).

const (
	maxPromptSections      = 32
	maxPromptSectionsChars = 8000
	promptSectionsStart    = "<!-- hermes-plugin-sections:start -->"
	promptSectionsEnd      = "<!-- hermes-plugin-sections:end -->"
)

// RenderSystemPromptSections renders every plugin section for a new session,
// sorted by id, in upstream's marked block; a section that fails, is empty, too
// long or carries the reserved markers is skipped with a warning.
func (r *Registry) RenderSystemPromptSections(ctx context.Context, info map[string]any) string {
	var secs []*PromptSection
	r.committed(func(_ string, s *set) { secs = append(secs, s.sections...) })
	if len(secs) == 0 {
		return ""
	}
	slices.SortFunc(secs, func(a, b *PromptSection) int { return strings.Compare(a.ID, b.ID) })
	var b strings.Builder
	total, n := 0, 0
	for _, s := range secs {
		if n == maxPromptSections {
			r.log.Warn("more than 32 system prompt sections; the rest are skipped", "section", s.ID)
			break
		}
		text := s.Content
		if s.Render != nil {
			var err error
			text, err = s.Render(ctx, maps.Clone(info))
			if err != nil {
				r.log.Warn("system prompt section skipped: its content function failed", "section", s.ID, "plugin", s.Plugin, "error", err)
				continue
			}
		}
		chars := len([]rune(text))
		switch {
		case strings.TrimSpace(text) == "":
			r.log.Warn("system prompt section skipped: empty", "section", s.ID, "plugin", s.Plugin)
			continue
		case strings.Contains(text, "<!-- hermes-plugin-section"):
			r.log.Warn("system prompt section skipped: contains reserved markers", "section", s.ID, "plugin", s.Plugin)
			continue
		case chars > s.MaxChars:
			r.log.Warn("system prompt section skipped: longer than its max_chars", "section", s.ID, "plugin", s.Plugin, "chars", chars, "max_chars", s.MaxChars)
			continue
		case total+chars > maxPromptSectionsChars:
			r.log.Warn("system prompt section skipped: sections would exceed 8000 characters in total", "section", s.ID, "plugin", s.Plugin)
			continue
		}
		total += chars
		n++
		fmt.Fprintf(&b, "## Plugin Context: %s\n<!-- hermes-plugin-section-chars:%d -->\n\n%s\n\n", s.ID, chars, text)
	}
	if n == 0 {
		return ""
	}
	return promptSectionsStart + "\n" + strings.TrimRight(b.String(), "\n") + "\n" + promptSectionsEnd
}
