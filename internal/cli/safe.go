package cli

import (
	"fmt"
	"io"
	"reflect"

	"github.com/hermes-go/hermes/internal/termsafe"
)

// Text that came from outside hermes (manifests, the catalog and the index,
// links, packs, plugins' registrations, the model, stored sessions) is made
// terminal-safe where a verb prints it: safe for one-line fields, safeText for
// blocks of several lines. --json output is JSON, escaped by JSON's rules only
// (writeJSON).

func safe(s string) string { return termsafe.Line(s) }

func safeText(s string) string { return termsafe.Text(s) }

// sayf is fmt.Fprintf for a line whose arguments come from outside hermes:
// every string and error argument is made safe (one line) first; the format,
// ours, is written as it is. Use fmt.Fprintf for %q, which escapes by itself.
func sayf(w io.Writer, format string, args ...any) {
	for i, a := range args {
		switch v := a.(type) {
		case string:
			args[i] = safe(v)
		case error:
			args[i] = safe(v.Error())
		case fmt.Stringer:
			args[i] = safe(v.String())
		default:
			if rv := reflect.ValueOf(a); rv.Kind() == reflect.String { // a named string type
				args[i] = safe(rv.String())
			}
		}
	}
	fmt.Fprintf(w, format, args...)
}
