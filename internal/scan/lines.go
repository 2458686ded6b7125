package scan

import (
	"bytes"

	"github.com/hermes-go/hermes/internal/lazyre"
)

// Per-file context that needs the lines before the current one. Each is computed
// lazily, only in files where a finding asks for it, and walks the file once.

// ownerTracker finds the line that opened the current line's statement (an unclosed
// bracket or a trailing backslash continues a statement), so a path token on a
// continuation line of a multi-line denylist is traced to the assignment above it.
type ownerTracker struct {
	pos, ownerStart, depth int
	continued              bool
}

var quotedSpan = lazyre.New(`'[^'\n]*'|"[^"\n]*"`)

func (st *fileState) ownerLine() []byte {
	if st.owners == nil {
		st.owners = &ownerTracker{}
	}
	o := st.owners
	for o.pos < st.lineStart {
		end := bytes.IndexByte(st.data[o.pos:], '\n')
		if end < 0 {
			break
		}
		end += o.pos
		line := st.data[o.pos:end]
		if o.depth <= 0 && !o.continued {
			o.ownerStart = o.pos
		}
		bare := line
		if len(bare) <= maxLineScan {
			bare = quotedSpan.ReplaceAll(line, nil)
		}
		o.depth += bytes.Count(bare, []byte("(")) + bytes.Count(bare, []byte("[")) + bytes.Count(bare, []byte("{")) -
			bytes.Count(bare, []byte(")")) - bytes.Count(bare, []byte("]")) - bytes.Count(bare, []byte("}"))
		o.depth = max(o.depth, 0)
		o.continued = bytes.HasSuffix(bytes.TrimRight(line, " \t\r"), []byte(`\`))
		o.pos = end + 1
	}
	if o.depth <= 0 && !o.continued {
		return st.data[st.lineStart:st.lineEnd]
	}
	end := bytes.IndexByte(st.data[o.ownerStart:], '\n')
	if end < 0 {
		return st.data[o.ownerStart:]
	}
	return st.data[o.ownerStart : o.ownerStart+end]
}

// fenceTracker knows whether the current Markdown line is inside a ``` or ~~~ fence.
type fenceTracker struct {
	pos     int
	inFence bool
}

func isFenceLine(line []byte) bool {
	t := bytes.TrimLeft(line, " \t")
	return bytes.HasPrefix(t, []byte("```")) || bytes.HasPrefix(t, []byte("~~~"))
}

// inFence reports whether the current line is inside a fenced block (a fence line
// itself counts as inside once it opens one).
func (st *fileState) inFence() bool {
	if st.fences == nil {
		st.fences = &fenceTracker{}
	}
	f := st.fences
	for f.pos < st.lineStart {
		end := bytes.IndexByte(st.data[f.pos:], '\n')
		if end < 0 {
			break
		}
		if isFenceLine(st.data[f.pos : f.pos+end]) {
			f.inFence = !f.inFence
		}
		f.pos += end + 1
	}
	in := f.inFence
	if isFenceLine(st.data[st.lineStart:st.lineEnd]) {
		in = !in
	}
	return in
}

// maskLinkDestinations blanks balanced Markdown inline-link destinations `](...)`,
// keeping offsets: a relative link describes the docs' structure, it reads no file.
func maskLinkDestinations(line []byte) []byte {
	out := append([]byte(nil), line...)
	from := 0
	for {
		i := bytes.Index(line[from:], []byte("]("))
		if i < 0 {
			return out
		}
		start := from + i
		depth, esc := 1, false
		cur := start + 2
		closed := false
		for ; cur < len(line); cur++ {
			c := line[cur]
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '(':
				depth++
			case c == ')':
				depth--
				if depth == 0 {
					for k := start + 2; k < cur; k++ {
						out[k] = ' '
					}
					from = cur + 1
					closed = true
				}
			}
			if closed {
				break
			}
		}
		if !closed {
			return out
		}
	}
}

var mainGuard = lazyre.New(`^(\s*)if\s+(?:__name__\s*==\s*["']__main__["']|["']__main__["']\s*==\s*__name__)\s*:\s*(?:#.*)?$`)

// inMainGuard: the current line is in the body of an `if __name__ == "__main__":`
// block (by indentation; the module's self-test harness, never run by the loader).
func (st *fileState) inMainGuard() bool {
	if st.mainBody == nil {
		st.mainBody = map[int]bool{}
		guardIndent := -1
		n := 0
		for rest := st.data; len(rest) > 0; {
			n++
			end := bytes.IndexByte(rest, '\n')
			var line []byte
			if end < 0 {
				line, rest = rest, nil
			} else {
				line, rest = rest[:end], rest[end+1:]
			}
			trim := bytes.TrimLeft(line, " \t")
			indent := len(line) - len(trim)
			blank := len(bytes.TrimSpace(trim)) == 0
			if guardIndent >= 0 {
				if blank || indent > guardIndent {
					st.mainBody[n] = !blank
					continue
				}
				guardIndent = -1
			}
			if len(line) <= maxLineScan {
				if m := mainGuard.FindSubmatch(line); m != nil {
					guardIndent = len(m[1])
				}
			}
		}
	}
	return st.mainBody[st.lineNo]
}
