package manifest

// yaml11Bools are the words PyYAML's YAML 1.1 resolver reads as booleans
// (y/n and mixed forms such as yES are not among them). Upstream Hermes reads
// config.yaml and plugin.yaml with PyYAML, so `scan_on_install: no` is false
// there, while the YAML 1.2 decoders here keep it the string "no".
var yaml11Bools = map[string]bool{
	"yes": true, "Yes": true, "YES": true, "no": false, "No": false, "NO": false,
	"true": true, "True": true, "TRUE": true, "false": false, "False": false, "FALSE": false,
	"on": true, "On": true, "ON": true, "off": false, "Off": false, "OFF": false,
}

// Bool reads a decoded value as a boolean setting the way upstream sees it: a
// bool, or a string PyYAML would have resolved to one. ok is false for
// anything else. The decoded value itself is left alone, so what is stored
// and printed does not change; only readers that want a boolean use this.
// A quoted "yes" is accepted too (the decoded value no longer says whether it
// was quoted), which errs towards what the user evidently meant.
func Bool(v any) (value, ok bool) {
	switch x := v.(type) {
	case bool:
		return x, true
	case string:
		value, ok = yaml11Bools[x]
		return value, ok
	}
	return false, false
}
