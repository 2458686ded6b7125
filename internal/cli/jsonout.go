package cli

import (
	"bytes"
	"encoding/json"
	"io"

	"github.com/hermes-go/hermes/internal/termsafe"
)

// writeJSON prints v as indented JSON for --json output. Like Python's json.dumps it
// does not escape <, > and & (a version spec ">=0.19" stays readable and greppable).
// It is escaped by JSON's rules only: the encoder's, and \u escapes for what an
// encoder leaves raw but a terminal obeys (C1 and bidi controls, DEL), so the
// values decode exactly as they were and printing them cannot drive the terminal.
func writeJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(termsafe.JSON(buf.Bytes()))
	return err
}
