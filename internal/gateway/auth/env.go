package auth

import (
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/lazyre"
)

// The gateway-wide variables (wave2 §2.4).
const (
	EnvGatewayAllowedUsers = "GATEWAY_ALLOWED_USERS"
	EnvGatewayAllowAll     = "GATEWAY_ALLOW_ALL_USERS"
)

// PlatformEnv names the variables that authorise users of one platform.
type PlatformEnv struct {
	AllowedUsers string // "TELEGRAM_ALLOWED_USERS=1,2"
	AllowAll     string // "DISCORD_ALLOW_ALL_USERS=true"
	// AllowedRoles, when set (Discord), names roles whose members the adapter
	// marks Source.RoleAuthorized; those count beside AllowedUsers.
	AllowedRoles string
}

// upstreamAllowlists are upstream's names where they are not simply
// <PLATFORM>_ALLOWED_USERS (gateway/pairing.py's table).
var upstreamAllowlists = map[string]string{
	"qqbot": "QQ_ALLOWED_USERS",
}

// DefaultPlatformEnv is a platform's variables when its registration names none:
// <PLATFORM>_ALLOWED_USERS and <PLATFORM>_ALLOW_ALL_USERS, upper-cased, and
// DISCORD_ALLOWED_ROLES for Discord.
func DefaultPlatformEnv(platform string) PlatformEnv {
	up := strings.ToUpper(strings.ReplaceAll(platform, "-", "_"))
	e := PlatformEnv{AllowedUsers: up + "_ALLOWED_USERS", AllowAll: up + "_ALLOW_ALL_USERS"}
	if name, ok := upstreamAllowlists[platform]; ok {
		e.AllowedUsers = name
		e.AllowAll = strings.TrimSuffix(name, "_ALLOWED_USERS") + "_ALLOW_ALL_USERS"
	}
	if platform == "discord" {
		e.AllowedRoles = "DISCORD_ALLOWED_ROLES"
	}
	return e
}

var platformNameRE = lazyre.New(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// validPlatform checks a platform name: it becomes part of file names.
func validPlatform(p string) error {
	if !platformNameRE.MatchString(p) {
		return fmt.Errorf("invalid platform name %q: use lower-case letters, digits, '_' or '-' (e.g. telegram, discord)", p)
	}
	return nil
}

// NormalizePlatform lower-cases and trims a platform name as typed, and checks it.
func NormalizePlatform(p string) (string, error) {
	p = strings.ToLower(strings.TrimSpace(p))
	return p, validPlatform(p)
}

// splitList reads a comma-separated list of ids, blanks dropped.
func splitList(raw string) []string {
	var out []string
	for _, s := range strings.Split(raw, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// listHas reports whether the comma-separated list raw holds one of ids. It
// reads raw in place: Check runs it for every message, over allowlists that
// may name thousands of users.
func listHas(raw string, ids ...string) bool {
	for raw != "" {
		var item string
		item, raw, _ = strings.Cut(raw, ",")
		item = strings.TrimSpace(item)
		for _, id := range ids {
			if item != "" && item == id {
				return true
			}
		}
	}
	return false
}

func contains(list []string, id string) bool {
	for _, s := range list {
		if s == id {
			return true
		}
	}
	return false
}

// truthy is upstream's reading of an allow-all switch.
func truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "1", "yes":
		return true
	}
	return false
}

// envView is the environment the rules read: $HERMES_HOME/.env over the
// process environment, as everywhere in hermes. The file is read again when
// it changes (an approval or a revoke by `hermes pairing` in another process
// takes effect on the next message, without a restart).
type envView struct {
	process func(string) string
	path    string

	mu     sync.Mutex
	stamp  os.FileInfo // the .env read last; nil: none was there
	values map[string]string
	err    error // the last read's failure; values are the last good read
}

func newEnvView(process func(string) string, path string) *envView {
	if process == nil {
		process = func(string) string { return "" }
	}
	return &envView{process: process, path: path, values: map[string]string{}}
}

// get is key's value: the .env's when it assigns key, else the process's.
func (e *envView) get(key string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.refresh()
	if v, ok := e.values[key]; ok {
		return v
	}
	return e.process(key)
}

// problem is why the .env could not be read last time, if it could not.
func (e *envView) problem() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.refresh()
	return e.err
}

// processValue is key's value in the process environment alone.
func (e *envView) processValue(key string) string { return e.process(key) }

func (e *envView) refresh() {
	if e.path == "" {
		return
	}
	fi, err := os.Stat(e.path)
	if err != nil {
		if e.stamp != nil || e.err != nil {
			e.stamp, e.values, e.err = nil, map[string]string{}, nil
		}
		return
	}
	if e.stamp != nil && os.SameFile(fi, e.stamp) && fi.ModTime().Equal(e.stamp.ModTime()) && fi.Size() == e.stamp.Size() {
		return
	}
	vals, err := config.ReadDotenv(e.path)
	if err != nil {
		e.err = err // keep the last good values: a half-written edit must not open or close the gate
		return
	}
	e.stamp, e.values, e.err = fi, vals, nil
}
