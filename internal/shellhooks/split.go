package shellhooks

import (
	"errors"
	"strings"
)

// SplitCommand splits a command line into its words as POSIX shlex does
// (Python's shlex.split, upstream's): whitespace separates words, single quotes
// keep everything, double quotes keep all but \" \\ \$ \` and an escaped
// newline, a backslash outside quotes escapes the next character. Nothing is
// expanded: no variables, globs, pipes or redirections, because no shell runs.
func SplitCommand(s string) ([]string, error) {
	var (
		words  []string
		cur    strings.Builder
		inWord bool
	)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case ' ', '\t', '\n', '\r':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case '\\':
			inWord = true
			if i+1 == len(s) {
				return nil, errors.New("the command ends in a lone backslash; escape it (\\\\) or remove it")
			}
			i++
			if s[i] != '\n' { // backslash-newline joins lines
				cur.WriteByte(s[i])
			}
		case '\'':
			inWord = true
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, errors.New("the command has an unclosed single quote; close it")
			}
			cur.WriteString(s[i+1 : i+1+end])
			i += end + 1
		case '"':
			inWord = true
			closed := false
			for i++; i < len(s); i++ {
				if s[i] == '"' {
					closed = true
					break
				}
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`\n", s[i+1]) >= 0 {
					i++
					if s[i] == '\n' {
						continue
					}
				}
				cur.WriteByte(s[i])
			}
			if !closed {
				return nil, errors.New("the command has an unclosed double quote; close it")
			}
		default:
			inWord = true
			cur.WriteByte(c)
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	if len(words) == 0 {
		return nil, errors.New("the command is empty")
	}
	return words, nil
}

// expandHome replaces a leading ~ or ~/ of a word with home, as
// os.path.expanduser does for the current user (~user is left alone).
func expandHome(word, home string) string {
	if home == "" || word == "" || word[0] != '~' {
		return word
	}
	if word == "~" {
		return home
	}
	if strings.HasPrefix(word, "~/") {
		return strings.TrimSuffix(home, "/") + word[1:]
	}
	return word
}
