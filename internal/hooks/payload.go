package hooks

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// checkPayloadsDefault turns the payload check on in test binaries only, the
// end-to-end scripts included (they run hermes inside the test binary): there a
// fire site that drifts from the catalog fails the suite; a release build pays
// one branch per Fire.
var checkPayloadsDefault = testing.Testing()

// payloadShape is a hook's catalog fields as the payload check reads them.
type payloadShape struct {
	fields    []string
	required  []bool // parallel to fields
	telemetry bool   // the fire site may set TelemetryField itself
}

func newPayloadShape(s *Spec) payloadShape {
	sh := payloadShape{fields: s.Fields, required: make([]bool, len(s.Fields)), telemetry: s.Telemetry}
	for i, f := range s.Fields {
		sh.required[i] = !slices.Contains(s.Optional, f)
	}
	return sh
}

// checkPayload reports how payload differs from what the catalog says hook
// carries: a required field missing, a field the catalog does not list, or a
// hook that is not in the catalog.
func checkPayload(hook Name, payload map[string]any) error {
	sh, ok := index().shapes[hook]
	if !ok {
		return fmt.Errorf("hooks: %q is not a hook of the catalog", hook)
	}
	// Counting is enough when the payload fits, which is every call that passes.
	known, missing := 0, false
	for i, f := range sh.fields {
		if _, ok := payload[f]; ok {
			known++
		} else if sh.required[i] {
			missing = true
		}
	}
	if _, ok := payload[TelemetryField]; ok && sh.telemetry {
		known++
	}
	if !missing && known == len(payload) {
		return nil
	}
	var lack, extra []string
	for i, f := range sh.fields {
		if _, ok := payload[f]; !ok && sh.required[i] {
			lack = append(lack, f)
		}
	}
	for k := range payload {
		if !slices.Contains(sh.fields, k) && (k != TelemetryField || !sh.telemetry) {
			extra = append(extra, k)
		}
	}
	slices.Sort(extra)
	var parts []string
	if len(lack) > 0 {
		parts = append(parts, "missing "+strings.Join(lack, ", "))
	}
	if len(extra) > 0 {
		parts = append(parts, "not in the catalog "+strings.Join(extra, ", "))
	}
	return fmt.Errorf("hooks: %s fired with a payload that differs from the catalog (internal/hooks/catalog.go): %s",
		hook, strings.Join(parts, "; "))
}

// mustMatchCatalog panics when payload differs from the catalog. A panic, not a
// log line or an error Fire's callers would drop: it fails whichever test drove
// the fire site, and the stack names the site.
func mustMatchCatalog(hook Name, payload map[string]any) {
	if err := checkPayload(hook, payload); err != nil {
		panic(err)
	}
}
