package manifest

import (
	"fmt"
	"sort"
	"strings"
)

// EntrySettings picks a plugin's settings out of its plugins.entries.<id>
// mapping: settings, or the legacy config when settings is missing, null or not
// a mapping. nil when neither is a mapping.
func EntrySettings(entry map[string]any) map[string]any {
	if m, ok := entry["settings"].(map[string]any); ok {
		return m
	}
	m, _ := entry["config"].(map[string]any)
	return m
}

// ValidateSettings checks a plugin's settings against its config_schema and
// returns one warning per problem, sorted by key, worded as upstream's
// validate_config_schema: a required key that is not set, or a value of the
// wrong type. Mismatches only warn; the plugin still loads. Keys the schema
// does not declare, and entries of unknown type, are not checked.
func ValidateSettings(schema map[string]SchemaField, settings map[string]any, id string) []string {
	keys := make([]string, 0, len(schema))
	for k := range schema {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var warns []string
	for _, key := range keys {
		f := schema[key]
		path := "plugins.entries." + id + ".settings." + key
		v, set := settings[key]
		if !set {
			if f.Required {
				warns = append(warns, path+" is required by the plugin's config_schema but is not set")
			}
			continue
		}
		if ok, known := typeMatches(f.Type, v); known && !ok {
			warns = append(warns, fmt.Sprintf("%s should be %s (got %s)", path, f.Type, PyTypeName(v)))
		}
	}
	return warns
}

// typeMatches applies a config_schema type to a value, with Python's rules:
// bool is not a number here, an int satisfies float/number. known is false for
// a missing or unknown type.
func typeMatches(typ string, v any) (ok, known bool) {
	switch strings.ToLower(typ) {
	case "str", "string":
		_, ok = v.(string)
	case "int", "integer":
		ok = isInt(v)
	case "float", "number":
		_, isFloat := v.(float64)
		ok = isFloat || isInt(v)
	case "bool", "boolean":
		_, ok = v.(bool)
	case "list", "array":
		_, ok = v.([]any)
	case "dict", "object":
		_, ok = v.(map[string]any)
	default:
		return false, false
	}
	return ok, true
}

func isInt(v any) bool {
	switch v.(type) {
	case int, int64, uint64:
		return true
	}
	return false
}

// PyTypeName is the Python type name of a decoded YAML value (type(v).__name__),
// as upstream's messages show it.
func PyTypeName(v any) string {
	switch v.(type) {
	case nil:
		return "NoneType"
	case string:
		return "str"
	case bool:
		return "bool"
	case int, int64, uint64:
		return "int"
	case float64:
		return "float"
	case []any:
		return "list"
	case map[string]any:
		return "dict"
	}
	return fmt.Sprintf("%T", v)
}
