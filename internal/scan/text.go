package scan

import (
	"strconv"
	"strings"
)

// PromptInjection scans text that goes into the model's system prompt (SOUL.md,
// a project context file) with the install scanner's rules and returns the
// prompt-injection findings that should keep it out: high or critical ones of
// the injection category. name is the file's name; it picks the file context
// (a .md is judged as documentation, as it is at install).
func PromptInjection(name string, data []byte) []Finding {
	var out []Finding
	for _, f := range newFileScanner(Options{}).scanData(name, data) {
		if f.Category == "injection" && (f.Severity == sevCritical || f.Severity == sevHigh) {
			out = append(out, f)
		}
	}
	return out
}

// Describe is a finding as one line for a user: what matched and where.
func (f Finding) Describe() string {
	var b strings.Builder
	b.WriteString(f.Description)
	if f.Line > 0 {
		b.WriteString(" (line ")
		b.WriteString(strconv.Itoa(f.Line))
		b.WriteString(")")
	}
	return b.String()
}
