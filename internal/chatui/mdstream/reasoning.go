package mdstream

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/hermes-go/hermes/internal/termsafe"
)

// Reasoning renders the model's thinking text: sanitised, wrapped at the
// width by display width, indented like the answer, and dimmed (faint) when
// colour is on. It is not markdown-rendered: it is shown folded and dim, and
// its markup would only add noise.
func Reasoning(text string, o Options) string {
	width := o.width()
	clean := termsafe.Text(strings.ReplaceAll(text, "\r\n", "\n"))
	var out []string
	for _, l := range strings.Split(clean, "\n") {
		l = strings.TrimRight(expandTabs(l), " ")
		if l == "" {
			out = append(out, "")
			continue
		}
		for _, w := range strings.Split(ansi.Wrap(l, width-2, ""), "\n") {
			w = "  " + strings.TrimRight(w, " ")
			if o.Color {
				w = "\x1b[2;3m" + w + "\x1b[m"
			}
			out = append(out, w)
		}
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return strings.Join(out, "\n")
}
