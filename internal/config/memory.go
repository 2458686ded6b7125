package config

import (
	"fmt"
	"strings"

	"github.com/hermes-go/hermes/internal/lazyre"
)

// memoryProviderRE is what a memory.provider value may look like: a provider
// directory or entry-point name.
var memoryProviderRE = lazyre.New(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// Memory settings upstream's built-in memory reads (memory.* in config.yaml).
const (
	DefaultMemoryCharLimit = 2200
	DefaultUserCharLimit   = 1375
)

// MemorySettings is the memory section of config.yaml.
type MemorySettings struct {
	// Provider is the one external memory provider beside the built-in memory
	// ("": built-in only).
	Provider           string
	MemoryEnabled      bool
	UserProfileEnabled bool
	MemoryCharLimit    int
	UserCharLimit      int
}

// Memory reads the memory section. A value that cannot be used is replaced
// by its default and explained in a warning that says how to fix it: a bad
// memory.provider must never keep a session from starting.
func Memory(d *Doc) (MemorySettings, []string) {
	s := MemorySettings{MemoryEnabled: true, UserProfileEnabled: true,
		MemoryCharLimit: DefaultMemoryCharLimit, UserCharLimit: DefaultUserCharLimit}
	if d == nil {
		return s, nil
	}
	var warns []string
	if v, ok := d.Get("memory.provider"); ok && v != nil {
		str, isStr := v.(string)
		str = strings.TrimSpace(str)
		switch {
		case !isStr:
			warns = append(warns, fmt.Sprintf("config.yaml memory.provider must be a provider name (a string), not %s; using the built-in memory only (fix it with `hermes memory setup` or `hermes memory off`)", kindOf(v)))
		case str == "" || strings.EqualFold(str, "builtin") || strings.EqualFold(str, "built-in") || strings.EqualFold(str, "none"):
		case !memoryProviderRE.MatchString(str):
			warns = append(warns, fmt.Sprintf("config.yaml memory.provider %q is not a provider name (letters, digits, '_', '-', '.'); using the built-in memory only (fix it with `hermes memory setup` or `hermes memory off`)", clipValue(str)))
		default:
			s.Provider = str
		}
	}
	boolKey := func(key string, dst *bool) {
		if v, ok := d.Get("memory." + key); ok {
			if b, ok := Bool(v); ok {
				*dst = b
			} else {
				warns = append(warns, fmt.Sprintf("config.yaml memory.%s must be true or false; using %v", key, *dst))
			}
		}
	}
	boolKey("memory_enabled", &s.MemoryEnabled)
	boolKey("user_profile_enabled", &s.UserProfileEnabled)
	intKey := func(key string, dst *int) {
		v, ok := d.Get("memory." + key)
		if !ok {
			return
		}
		switch n := v.(type) {
		case int:
			if n > 0 {
				*dst = n
				return
			}
		case int64:
			if n > 0 && n < 1<<31 {
				*dst = int(n)
				return
			}
		case uint64:
			if n > 0 && n < 1<<31 {
				*dst = int(n)
				return
			}
		}
		warns = append(warns, fmt.Sprintf("config.yaml memory.%s must be a positive number of characters; using %d", key, *dst))
	}
	intKey("memory_char_limit", &s.MemoryCharLimit)
	intKey("user_char_limit", &s.UserCharLimit)
	return s, warns
}

func clipValue(s string) string {
	r := []rune(s)
	if len(r) > 60 {
		return string(r[:60]) + "…"
	}
	return s
}
