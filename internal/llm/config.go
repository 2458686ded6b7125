package llm

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hermes-go/hermes/internal/lazyre"
)

// Provider is what hermes knows about a named provider: where it lives and which
// environment variable holds its key when model.api_key is not set.
type Provider struct {
	// Name is the provider's own name when the map key is an alias ("" = the key).
	Name    string
	BaseURL string
	KeyEnv  string // "" for local servers that need no key
	// BaseURLEnv, when set in the environment, overrides BaseURL (a plugin
	// profile's "X_BASE_URL" env var).
	BaseURLEnv string
	// Headers are sent with every request (a plugin profile's default_headers).
	Headers map[string]string
}

// DefaultProvider is the provider of a model section that names neither a
// provider nor a base URL.
const DefaultProvider = "openrouter"

// CustomProvider is the provider of a model section with only a base URL:
// its key falls back to OPENAI_API_KEY.
const CustomProvider = "custom"

var varRef = lazyre.New(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// FromConfig builds a Config from the config.yaml "model" section and the
// providers hermes has (providers, by name and by alias: the bundled
// profiles and the plugins' register_provider ones, all registered alike):
//
//	model:
//	  default: anthropic/claude-sonnet-4     # the model id (required)
//	  provider: openrouter                   # optional; a default base URL and key variable
//	  base_url: http://localhost:8000/v1     # optional when the provider is known
//	  api_key: ${OPENROUTER_API_KEY}         # ${VAR} from the environment, then $HERMES_HOME/.env
//	  api_mode: chat_completions             # the only mode hermes speaks
//	  request_timeout: 120                   # seconds one attempt waits for the model to answer (optional)
//	  timeout: 600                           # seconds per non-streamed attempt without request_timeout (optional)
//	  stream_idle_timeout: 120               # seconds a stream that answers may stay silent (optional)
//	  max_retries: 3                         # optional; 0 disables retries
//
// A key is optional for a base URL on this machine (localhost, 127.0.0.0/8, ::1);
// otherwise a missing key is an error naming the variable to set. settings may be nil
// (no model section): the error then says what to add.
func FromConfig(ctx context.Context, settings map[string]any, env func(string) string, dotenv map[string]string, providers map[string]Provider) (Config, error) {
	_ = ctx
	if env == nil {
		env = func(string) string { return "" }
	}
	lookup := func(name string) (string, bool) {
		if v := env(name); v != "" {
			return v, true
		}
		if v, ok := dotenv[name]; ok && v != "" {
			return v, true
		}
		return "", false
	}
	expand := func(key, s string) (string, error) {
		var missing []string
		out := varRef.ReplaceAllStringFunc(s, func(ref string) string {
			name := ref[2 : len(ref)-1]
			v, ok := lookup(name)
			if !ok {
				missing = append(missing, name)
			}
			return v
		})
		if len(missing) > 0 {
			return "", fmt.Errorf("model.%s refers to ${%s}, which is set neither in the environment nor in $HERMES_HOME/.env", key, missing[0])
		}
		return out, nil
	}

	var cfg Config
	if settings == nil {
		return cfg, fmt.Errorf("no model configured: add to config.yaml\n  model:\n    default: <model id>\n    provider: openrouter   # or base_url: http://localhost:8000/v1")
	}
	var err error
	str := func(key string) (string, error) {
		v, ok := settings[key]
		if !ok || v == nil {
			return "", nil
		}
		switch x := v.(type) {
		case string:
			return expand(key, strings.TrimSpace(x))
		case bool, int, int64, uint64, float64:
			return fmt.Sprint(x), nil
		}
		return "", fmt.Errorf("model.%s must be a string, not %T", key, v)
	}
	if mode, err := str("api_mode"); err != nil {
		return cfg, err
	} else if mode != "" && mode != "chat_completions" {
		return cfg, fmt.Errorf("model.api_mode %q is not supported: hermes speaks the OpenAI-compatible chat completions API; set model.api_mode: chat_completions", mode)
	}
	if cfg.Model, err = str("default"); err != nil {
		return cfg, err
	}
	if cfg.Model == "" {
		// Some configs say model.model or model.name; accept them quietly.
		for _, k := range []string{"model", "name"} {
			if cfg.Model, err = str(k); err != nil {
				return cfg, err
			}
			if cfg.Model != "" {
				break
			}
		}
	}
	if cfg.Model == "" {
		return cfg, fmt.Errorf("no model configured: set model.default in config.yaml (e.g. model.default: anthropic/claude-sonnet-4)")
	}
	if cfg.Provider, err = str("provider"); err != nil {
		return cfg, err
	}
	cfg.Provider = strings.ToLower(cfg.Provider)
	if cfg.BaseURL, err = str("base_url"); err != nil {
		return cfg, err
	}
	if cfg.Provider == "auto" {
		cfg.Provider = ""
	}
	if cfg.Provider == "" && cfg.BaseURL == "" {
		cfg.Provider = DefaultProvider
	}
	prov, known := providers[cfg.Provider]
	if known {
		// An alias selects its provider under the provider's own name.
		if prov.Name != "" {
			cfg.Provider = prov.Name
		}
		if v, ok := lookup(prov.BaseURLEnv); ok && prov.BaseURLEnv != "" && cfg.BaseURL == "" {
			cfg.BaseURL = v
		}
		cfg.Headers = prov.Headers
	}
	switch {
	case cfg.BaseURL != "":
		if cfg.Provider == "" {
			cfg.Provider = CustomProvider
		}
	case known && prov.BaseURL != "":
		cfg.BaseURL = prov.BaseURL
	case known || cfg.Provider == CustomProvider:
		return cfg, fmt.Errorf("model.provider %s has no default endpoint: set model.base_url (e.g. http://localhost:8000/v1)", cfg.Provider)
	case cfg.Provider == DefaultProvider:
		return cfg, fmt.Errorf("no model.provider or model.base_url is set, and the default provider %s is not available (disabled?): set model.base_url or model.provider", DefaultProvider)
	default:
		return cfg, fmt.Errorf("model.provider %q has no default endpoint: set model.base_url (known providers: %s)", cfg.Provider, strings.Join(providerNames(providers), ", "))
	}
	if u, perr := url.Parse(cfg.BaseURL); perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return cfg, fmt.Errorf("model.base_url %q is not an http(s) URL (e.g. http://localhost:8000/v1)", cfg.BaseURL)
	}
	if cfg.APIKey, err = str("api_key"); err != nil {
		return cfg, err
	}
	if cfg.APIKey == "" && prov.KeyEnv != "" {
		cfg.APIKey, _ = lookup(prov.KeyEnv)
	}
	if cfg.APIKey == "" && cfg.Provider == CustomProvider {
		cfg.APIKey, _ = lookup("OPENAI_API_KEY")
	}
	if cfg.APIKey == "" && !isLocal(cfg.BaseURL) {
		hint := "set model.api_key in config.yaml (e.g. api_key: ${MY_API_KEY})"
		if prov.KeyEnv != "" {
			hint = fmt.Sprintf("set %s in the environment or in $HERMES_HOME/.env, or model.api_key in config.yaml", prov.KeyEnv)
		}
		return cfg, fmt.Errorf("no API key for %s (%s): %s", cfg.Provider, cfg.BaseURL, hint)
	}
	for _, d := range []struct {
		key string
		dst *time.Duration
	}{{"timeout", &cfg.Timeout}, {"request_timeout", &cfg.RequestTimeout}, {"stream_idle_timeout", &cfg.IdleTimeout}} {
		s, err := str(d.key)
		if err != nil || s == "" {
			if err != nil {
				return cfg, err
			}
			continue
		}
		secs, perr := strconv.ParseFloat(s, 64)
		if perr != nil || secs <= 0 {
			return cfg, fmt.Errorf("model.%s must be a positive number of seconds, not %q", d.key, s)
		}
		*d.dst = time.Duration(secs * float64(time.Second))
	}
	if s, err := str("max_retries"); err != nil {
		return cfg, err
	} else if s != "" {
		n, perr := strconv.Atoi(s)
		if perr != nil || n < 0 {
			return cfg, fmt.Errorf("model.max_retries must be a whole number ≥ 0, not %q", s)
		}
		cfg.MaxRetries = n
		if n == 0 {
			cfg.MaxRetries = -1 // Config's 0 means "the default"
		}
	}
	return cfg, nil
}

// ModelSection reads config.yaml's "model" value for FromConfig: a mapping as is, and
// the short form `model: some/model-id` as {"default": "some/model-id"}; anything
// else (absent, null) is nil.
func ModelSection(v any) map[string]any {
	switch x := v.(type) {
	case map[string]any:
		return x
	case string:
		if strings.TrimSpace(x) != "" {
			return map[string]any{"default": strings.TrimSpace(x)}
		}
	}
	return nil
}

// providerNames are the providers' own names (not their aliases), sorted.
func providerNames(providers map[string]Provider) []string {
	names := make([]string, 0, len(providers))
	for n, p := range providers {
		if p.Name == "" || p.Name == n {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// isLocal reports a base URL on this machine, where servers (Ollama, vLLM,
// llama.cpp, a test's fake) usually need no key.
func isLocal(base string) bool {
	u, err := url.Parse(base)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && (ip.IsLoopback() || ip.IsUnspecified())
}
