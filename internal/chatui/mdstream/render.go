package mdstream

import (
	"fmt"
	"strings"
	"sync"

	"charm.land/glamour/v2"
	gansi "charm.land/glamour/v2/ansi"
	"charm.land/glamour/v2/styles"
	"github.com/charmbracelet/x/ansi"
)

// renderer is one glamour TermRenderer. Building one costs far more than
// rendering a paragraph with it, so there is one per (width, colour), shared
// by every Stream; the mutex because glamour's renderer keeps state while it
// renders.
type renderer struct {
	mu sync.Mutex
	tr *glamour.TermRenderer
}

type rkey struct {
	width int
	color bool
}

var renderers sync.Map // rkey → *renderer

func rendererFor(width int, color bool) *renderer {
	k := rkey{width, color}
	if r, ok := renderers.Load(k); ok {
		return r.(*renderer)
	}
	style := plainStyle()
	if color {
		style = styles.DarkStyleConfig
	}
	tr, err := glamour.NewTermRenderer(glamour.WithStyles(style), glamour.WithWordWrap(width))
	if err != nil {
		// Only a bad style makes this fail, and the styles are glamour's own.
		panic(fmt.Sprintf("mdstream: glamour renderer: %v", err))
	}
	r, _ := renderers.LoadOrStore(k, &renderer{tr: tr})
	return r.(*renderer)
}

// plainStyle is glamour's style for no terminal, with inline code in
// backticks: without colour nothing else would tell code from prose.
func plainStyle() gansi.StyleConfig {
	s := styles.NoTTYStyleConfig
	s.Code.Prefix, s.Code.Suffix = "`", "`"
	return s
}

// render renders one block of sanitised markdown and returns its lines:
// blank lines around it trimmed, trailing padding cut, nothing but SGR kept.
func (r *renderer) render(src string, color bool) []string {
	r.mu.Lock()
	out, err := r.tr.Render(src)
	r.mu.Unlock()
	if err != nil {
		// goldmark does not fail on any input; if glamour ever does, the
		// text itself is still worth showing.
		out = src
	}
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		lines[i] = tidy(l, color)
	}
	for len(lines) > 0 && lines[0] == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// tidy keeps of one rendered line only its text and (with colour) its SGR
// sequences: glamour writes OSC 8 hyperlinks, which would carry the model's
// URL to the terminal as a control sequence, and the URL is shown as text
// anyway. Trailing blanks (glamour pads every line to the width) are cut so a
// resized terminal does not wrap them, and a line that set a colour ends
// with a reset.
func tidy(l string, color bool) string {
	var b strings.Builder
	b.Grow(len(l))
	end := 0 // b's length after the last visible non-blank character
	styled := false
	var state byte
	for len(l) > 0 {
		seq, w, n, ns := ansi.DecodeSequence(l, state, nil)
		state = ns
		switch {
		case w > 0 || (len(seq) > 0 && seq[0] != 0x1b && seq[0] >= 0x20):
			b.WriteString(seq)
			if strings.Trim(seq, " ") != "" { // glamour pads with spaces; a no-break space is content
				end = b.Len()
			}
		case color && isSGR(seq):
			b.WriteString(seq)
			styled = true
		}
		l = l[n:]
	}
	s := b.String()[:end]
	if color && styled && strings.Contains(s, "\x1b[") {
		s += "\x1b[m"
	}
	return s
}

// isSGR reports ESC [ params m.
func isSGR(seq string) bool {
	if len(seq) < 3 || seq[0] != 0x1b || seq[1] != '[' || seq[len(seq)-1] != 'm' {
		return false
	}
	for i := 2; i < len(seq)-1; i++ {
		if c := seq[i]; c != ';' && c != ':' && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}
