package redact

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// Limits on what one plugin may add: patterns run over every log line and tool
// result, so a plugin cannot make that arbitrarily expensive.
const (
	MaxPatternBytes     = 512
	MaxPatternsPerCall  = 100
	minLiteralPrefixLen = 2
)

// Check reports why a plugin pattern is refused, or nil. A pattern must compile
// in Go's RE2 syntax and start with at least 2 literal characters in every
// branch: that is what keeps it from matching everything ('.*', '\w+', 'ab|.*')
// and what the prefilter looks for.
func Check(pattern string) error {
	_, _, err := check(pattern)
	return err
}

// check returns the pattern's literal prefix and whether it is matched
// case-insensitively.
func check(pattern string) (string, bool, error) {
	if strings.TrimSpace(pattern) == "" {
		return "", false, fmt.Errorf("the pattern is empty")
	}
	if len(pattern) > MaxPatternBytes {
		return "", false, fmt.Errorf("the pattern is %d bytes; the limit is %d", len(pattern), MaxPatternBytes)
	}
	if _, err := regexp.Compile(pattern); err != nil {
		return "", false, fmt.Errorf("it does not compile as a Go (RE2) regular expression: %w; lookarounds and backreferences are not supported", err)
	}
	tree, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return "", false, fmt.Errorf("it does not parse: %w", err)
	}
	lit, fold, alternation := literalPrefix(tree)
	if utf8.RuneCountInString(lit) < minLiteralPrefixLen {
		if alternation {
			return "", false, fmt.Errorf("a top-level alternation leaves it without a common literal prefix (in 'ab|.*' the prefix binds only the first branch); put the alternation in a group after the prefix, e.g. 'ab(?:x|y)'")
		}
		return "", false, fmt.Errorf("it must start with at least %d literal characters (e.g. 'acme_[A-Za-z0-9]{20,}'), so it cannot match everything", minLiteralPrefixLen)
	}
	return lit, fold, nil
}

// literalPrefix returns the literal text every match of re starts with, whether
// it is case-folded, and whether re is a top-level alternation.
func literalPrefix(re *syntax.Regexp) (string, bool, bool) {
	for re.Op == syntax.OpCapture && len(re.Sub) == 1 {
		re = re.Sub[0]
	}
	switch re.Op {
	case syntax.OpLiteral:
		return string(re.Rune), re.Flags&syntax.FoldCase != 0, false
	case syntax.OpAlternate:
		return "", false, true
	case syntax.OpConcat:
		var b strings.Builder
		fold := false
		for _, sub := range re.Sub {
			if sub.Op != syntax.OpLiteral {
				// A prefix found so far stays; what follows is not literal.
				break
			}
			if b.Len() > 0 && (sub.Flags&syntax.FoldCase != 0) != fold {
				break
			}
			fold = sub.Flags&syntax.FoldCase != 0
			b.WriteString(string(sub.Rune))
		}
		return b.String(), fold, false
	}
	return "", false, false
}
