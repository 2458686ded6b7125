package cli

import (
	"bytes"
	"encoding/json"
	"io"
)

// writeJSON prints v as indented JSON for --json output. Like Python's json.dumps it
// does not escape <, > and & (a version spec ">=0.19" stays readable and greppable).
func writeJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}
