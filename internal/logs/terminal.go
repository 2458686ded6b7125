package logs

import "strings"

// TerminalSafe makes a plugin's line unable to move the cursor or rewrite what
// the terminal shows (a carriage return and "erase line" could hide the plugin's
// tag and pass its text off as hermes' own): control characters are shown in
// caret notation (^M, ^[); colour sequences (ESC [ ... m) stay, and a line that
// used one ends with a reset.
func TerminalSafe(line string) string {
	clean := true
	for i := 0; i < len(line); i++ {
		if c := line[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			clean = false
			break
		}
	}
	if clean {
		return line
	}
	var b strings.Builder
	coloured := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c == 0x1b {
			if n := sgrLen(line[i:]); n > 0 {
				b.WriteString(line[i : i+n])
				i += n - 1
				coloured = true
				continue
			}
		}
		switch {
		case c == '\t':
			b.WriteByte(c)
		case c < 0x20:
			b.WriteByte('^')
			b.WriteByte(c + '@')
		case c == 0x7f:
			b.WriteString("^?")
		default:
			b.WriteByte(c)
		}
	}
	if coloured {
		b.WriteString("\x1b[0m")
	}
	return b.String()
}

// sgrLen is the length of the colour sequence (ESC [ digits and ; m) s starts
// with, or 0.
func sgrLen(s string) int {
	if len(s) < 3 || s[1] != '[' {
		return 0
	}
	for i := 2; i < len(s); i++ {
		switch c := s[i]; {
		case c == 'm':
			return i + 1
		case c == ';' || (c >= '0' && c <= '9'):
		default:
			return 0
		}
	}
	return 0
}
