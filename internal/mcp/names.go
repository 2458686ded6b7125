package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"path"
	"strings"
)

// maxToolName is the longest tool name model APIs accept.
const maxToolName = 64

// ToolName is the model's name for tool of server: mcp__<server>__<tool>, every
// character outside [A-Za-z0-9_] made "_", cut to 64 characters with a hash
// of the full name so two long names stay apart (wave2 §3.2). cut reports
// the cut, for a warning.
func ToolName(server, tool string) (name string, cut bool) {
	name = "mcp__" + sanitize(server) + "__" + sanitize(tool)
	if len(name) <= maxToolName {
		return name, false
	}
	sum := sha256.Sum256([]byte(name))
	suffix := "_" + hex.EncodeToString(sum[:])[:8]
	return name[:maxToolName-len(suffix)] + suffix, true
}

// Toolset is the toolset of a server's tools.
func Toolset(server string) string { return "mcp-" + server }

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, s)
}

// allowed applies tools.include / tools.exclude (exact names or globs) to the
// server's original tool name: include wins; an include list, even empty,
// admits only what it names.
func (s *ServerConfig) allowed(tool string) bool {
	if s.includeSet {
		return matchAny(s.Include, tool)
	}
	return !matchAny(s.Exclude, tool)
}

func matchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if p == name {
			return true
		}
		if ok, err := path.Match(p, name); err == nil && ok {
			return true
		}
	}
	return false
}

// stripTags removes Unicode TAG characters (U+E0000–E007F), an invisible
// channel for prompt injection in descriptions.
func stripTags(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 0xE0000 && r <= 0xE007F {
			return -1
		}
		return r
	}, s)
}
