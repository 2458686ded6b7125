package app

import "github.com/hermes-go/hermes/internal/config"

// Readers of config.yaml values by path, for settings without a typed reader.

// boolAt reads the boolean at path (YAML 1.1 spellings), def when missing.
func boolAt(cfg map[string]any, def bool, path ...string) bool {
	v, _ := valueAt(cfg, path...)
	if b, ok := config.Bool(v); ok {
		return b
	}
	return def
}

// stringAt reads the string at path.
func stringAt(cfg map[string]any, path ...string) (string, bool) {
	v, _ := valueAt(cfg, path...)
	s, ok := v.(string)
	return s, ok
}

// valueAt is the value at path in config.yaml.
func valueAt(cfg map[string]any, path ...string) (any, bool) {
	var v any = cfg
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[p]; !ok {
			return nil, false
		}
	}
	return v, true
}
