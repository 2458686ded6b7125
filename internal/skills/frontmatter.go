// Package skills reads SKILL.md skills: the user's under $HERMES_HOME/skills
// and those plugins registered (addressed "<namespace>:<name>"), and serves
// them to the model as upstream's skills_list and skill_view results. Every
// SKILL.md (and every linked file) passes the install scanner's
// prompt-injection rules before its text can reach the model; one with a
// finding is withheld, with a note saying why.
package skills

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/hermes-go/hermes/internal/lazyre"

	"github.com/hermes-go/hermes/internal/limits"
)

// maxSkillBytes bounds one SKILL.md or linked file: upstream recommends under
// 5000 tokens for a SKILL.md, so 1 MiB is far past any real one.
const maxSkillBytes = 1 << 20

var yamlPosRE = lazyre.New(`^\[(\d+):\d+\]\s*(.*)$`)

// frontmatterKind caps the YAML between the --- lines before it is parsed.
var frontmatterKind = limits.Kind{Noun: "a SKILL.md frontmatter", Fix: "shorten the frontmatter (name, description, version, metadata)",
	MaxBytes: 64 << 10, MaxDepth: 16, MaxNodes: 2000}

// FrontmatterError is a SKILL.md whose frontmatter cannot be read. Line is
// 1-based within the file, 0 when unknown.
type FrontmatterError struct {
	Line int
	Msg  string
}

func (e *FrontmatterError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("frontmatter line %d: %s", e.Line, e.Msg)
	}
	return "frontmatter: " + e.Msg
}

// ParseFrontmatter splits a SKILL.md into its YAML frontmatter (the mapping
// between a first line "---" and the next "---" line) and the body. A file
// without frontmatter has a nil mapping and no error; one that opens
// frontmatter and never closes it, or whose frontmatter is not a YAML
// mapping, is an error saying what to fix.
func ParseFrontmatter(content []byte) (map[string]any, []byte, error) {
	content = bytes.TrimPrefix(content, []byte("\ufeff"))
	first, rest, _ := bytes.Cut(content, []byte("\n"))
	if string(bytes.TrimRight(first, " \t\r")) != "---" {
		return nil, content, nil
	}
	var yamlText, body []byte
	closed := false
	for len(rest) > 0 {
		l, next, found := bytes.Cut(rest, []byte("\n"))
		if t := string(bytes.TrimRight(l, " \t\r")); t == "---" || t == "..." {
			closed, body = true, next
			break
		}
		yamlText = append(append(yamlText, l...), '\n')
		if !found {
			break
		}
		rest = next
	}
	if !closed {
		return nil, nil, &FrontmatterError{Line: 1, Msg: "opened with --- but never closed; end it with a line holding only ---"}
	}
	if err := limits.CheckYAML(yamlText, "SKILL.md", frontmatterKind); err != nil {
		var le *limits.Error
		if errors.As(err, &le) {
			return nil, nil, &FrontmatterError{Line: le.Line + 1, Msg: le.Detail()}
		}
		return nil, nil, &FrontmatterError{Msg: err.Error()}
	}
	if len(bytes.TrimSpace(yamlText)) == 0 {
		return map[string]any{}, body, nil
	}
	var v any
	if err := decodeYAML(yamlText, &v); err != nil {
		msg := oneLine(err.Error())
		// goccy/go-yaml says "[line:col] message", counting from the frontmatter.
		if m := yamlPosRE.FindStringSubmatch(msg); m != nil {
			line, _ := strconv.Atoi(m[1])
			return nil, nil, &FrontmatterError{Line: line + 1, Msg: "not valid YAML: " + m[2]}
		}
		return nil, nil, &FrontmatterError{Msg: "not valid YAML: " + msg}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, nil, &FrontmatterError{Msg: fmt.Sprintf("must be a mapping of keys (name, description, ...), not %s", typeName(v))}
	}
	for _, k := range []string{"name", "description", "version"} {
		if x, ok := m[k]; ok && x != nil {
			switch x.(type) {
			case string:
			case int, uint64, float64:
				if k != "version" {
					return nil, nil, &FrontmatterError{Msg: fmt.Sprintf("%s must be a string, not %s", k, typeName(x))}
				}
				m[k] = fmt.Sprint(x)
			default:
				return nil, nil, &FrontmatterError{Msg: fmt.Sprintf("%s must be a string, not %s", k, typeName(x))}
			}
		}
	}
	return m, body, nil
}

func decodeYAML(data []byte, v *any) (err error) {
	defer func() {
		// A parser bug on hostile input must cost one skill, not the command.
		if r := recover(); r != nil {
			err = fmt.Errorf("the YAML parser failed: %v", r)
		}
	}()
	return yaml.UnmarshalWithOptions(data, v, yaml.AllowDuplicateMapKey())
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "empty"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int, uint64, float64:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	}
	return fmt.Sprintf("%T", v)
}

// str is a frontmatter string value, "" when absent or of another type.
func str(fm map[string]any, k string) string {
	s, _ := fm[k].(string)
	return strings.TrimSpace(s)
}

// list reads tags-like values: a YAML list, or "a, b" / "[a, b]" text.
func list(v any) []string {
	out := []string{}
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			if s, ok := e.(string); ok && strings.TrimSpace(s) != "" {
				out = append(out, strings.TrimSpace(s))
			}
		}
	case string:
		x = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(x), "["), "]")
		for _, s := range strings.Split(x, ",") {
			if s = strings.Trim(strings.TrimSpace(s), `"'`); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}
