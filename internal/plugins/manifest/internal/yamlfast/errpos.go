package yamlfast

import "github.com/goccy/go-yaml/token"

// ErrorPosition is where to report a goccy/go-yaml syntax error with message msg
// and token tk (0, 0 when unknown). For "mapping value is not allowed" goccy
// points at the scalar before the offending ':', which for a wrongly indented
// key is the previous line's value folded into it ("1 bad" at line 2 for
// "version: 1\n  bad: x"); PyYAML, and the user, look at the ':' itself.
func ErrorPosition(msg string, tk *token.Token) (line, col int) {
	if tk == nil {
		return 0, 0
	}
	if msg == "mapping value is not allowed in this context" {
		if next := tk.Next; next != nil && next.Type == token.MappingValueType && next.Position != nil {
			tk = next
		}
	}
	if tk.Position == nil {
		return 0, 0
	}
	return tk.Position.Line, tk.Position.Column
}
