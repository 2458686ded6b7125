// Package auth decides who may talk to the gateway's agent, in upstream's
// order (wave2 §2.4), and keeps the pairing store through which the owner lets
// new people in. The runner asks Check for every message before anything else
// sees it (no hook, no agent, no model), and acts on the Decision: go on, drop
// silently, or answer a DM with a pairing code (PairingReply).
package auth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/hermes-go/hermes/internal/gateway/platform"
	"github.com/hermes-go/hermes/internal/session"
)

// Rule names which rule decided.
type Rule string

const (
	RulePlatformAllowAll  Rule = "platform_allow_all" // <PLATFORM>_ALLOW_ALL_USERS
	RulePaired            Rule = "paired"             // the pairing store's approved list
	RulePlatformAllowlist Rule = "platform_allowlist" // <PLATFORM>_ALLOWED_USERS
	RulePlatformRole      Rule = "platform_role"      // DISCORD_ALLOWED_ROLES, granted by the adapter
	RuleGatewayAllowlist  Rule = "gateway_allowlist"  // GATEWAY_ALLOWED_USERS
	RuleGatewayAllowAll   Rule = "gateway_allow_all"  // GATEWAY_ALLOW_ALL_USERS
	RuleDenied            Rule = "denied"
)

// DMBehavior is what happens to a DM from someone not authorised
// (unauthorized_dm_behavior).
type DMBehavior string

const (
	BehaviorPair   DMBehavior = "pair"   // reply with a pairing code
	BehaviorIgnore DMBehavior = "ignore" // drop it silently
)

// Decision is Check's answer.
type Decision struct {
	Allowed bool
	Rule    Rule
	// Pair, when the message is denied, says to answer it with PairingReply: a
	// DM with a sender id on a platform whose behaviour is pair. Otherwise a
	// denied message is dropped without a word.
	Pair bool
	// Problem is a file the rules could not read (a malformed approved list, an
	// unreadable .env): the decision was made without it; log it.
	Problem error
}

// ConfigReader is what auth reads of config.yaml (a *config.Doc).
type ConfigReader interface {
	GetPath(segs []string) (any, bool)
}

// Options configure New.
type Options struct {
	Home   string              // HERMES_HOME: .env and platforms/pairing/ in it
	Env    func(string) string // the process environment; $HERMES_HOME/.env is read over it
	Config ConfigReader        // config.yaml; nil: the defaults
	Clock  func() time.Time
	// Platforms names the variables of platforms that do not use the defaults:
	// a platform plugin's register_platform(allowed_users_env=, allow_all_env=).
	Platforms map[string]PlatformEnv
	Rand      io.Reader // nil: crypto/rand
	// State keeps the pairing documents (see PairingOptions.State); nil:
	// upstream's files under Home.
	State session.DocStore
}

// Authorizer holds the rules of one gateway (or one `hermes pairing` command).
type Authorizer struct {
	env      *envView
	names    func(string) PlatformEnv
	pairing  *Pairing
	behavior map[string]DMBehavior // "" = the global setting; absent: not set
	envPath  string
}

// New reads the rules' configuration and opens the pairing store. A bad
// unauthorized_dm_behavior is an error that names the key.
func New(ctx context.Context, o Options) (*Authorizer, error) {
	if o.Home == "" {
		return nil, errors.New("no HERMES_HOME for the gateway's authorisation")
	}
	envPath := filepath.Join(o.Home, ".env")
	env := newEnvView(o.Env, envPath)
	behavior, err := readBehaviors(o.Config)
	if err != nil {
		return nil, err
	}
	p, err := openPairing(ctx, PairingOptions{Home: o.Home, Clock: o.Clock, Platforms: o.Platforms, Rand: o.Rand, State: o.State}, env)
	if err != nil {
		return nil, err
	}
	return &Authorizer{env: env, names: envNames(o.Platforms), pairing: p, behavior: behavior, envPath: envPath}, nil
}

// Pairing is the pairing store the rules read.
func (a *Authorizer) Pairing() *Pairing { return a.pairing }

// Check decides whether the sender of a message from src may talk to the agent.
func (a *Authorizer) Check(src platform.Source) Decision {
	return a.check(src, true)
}

// CheckInjected is Check for ctx.inject_message: the stored route is judged by
// the current rules alone, never by an adapter-time grant (Source.RoleAuthorized),
// which was true when the message came and need not be now.
func (a *Authorizer) CheckInjected(src platform.Source) Decision {
	return a.check(src, false)
}

func (a *Authorizer) check(src platform.Source, adapterTrust bool) Decision {
	d := Decision{Rule: RuleDenied, Problem: a.env.problem()}
	pl, user := strings.ToLower(src.Platform), strings.TrimSpace(src.UserID)
	if user == "" || validPlatform(pl) != nil {
		return d // nobody to authorise, nobody to pair
	}
	names := a.names(pl)
	allow := func(r Rule) Decision { d.Allowed, d.Rule = true, r; return d }
	if names.AllowAll != "" && truthy(a.env.get(names.AllowAll)) {
		return allow(RulePlatformAllowAll)
	}
	paired, err := a.pairing.IsApproved(pl, user)
	if err != nil {
		d.Problem = errors.Join(d.Problem, err)
	}
	if paired {
		return allow(RulePaired)
	}
	if listHas(a.env.get(names.AllowedUsers), user, "*") {
		return allow(RulePlatformAllowlist)
	}
	if adapterTrust && src.RoleAuthorized && names.AllowedRoles != "" && len(splitList(a.env.get(names.AllowedRoles))) > 0 {
		return allow(RulePlatformRole)
	}
	if listHas(a.env.get(EnvGatewayAllowedUsers), user, "*") {
		return allow(RuleGatewayAllowlist)
	}
	if truthy(a.env.get(EnvGatewayAllowAll)) {
		return allow(RuleGatewayAllowAll)
	}
	d.Pair = src.ChatType == platform.ChatDM && a.Behavior(pl) == BehaviorPair
	return d
}

// Behavior is platform's unauthorized_dm_behavior: platforms.<p>.… (or the
// top-level <p>: block) over the global key; when neither is set, ignore if an
// allowlist is configured for the platform or gateway-wide (the operator chose
// who may talk: strangers get no codes), else pair. As upstream, email ignores.
func (a *Authorizer) Behavior(pl string) DMBehavior {
	if b, ok := a.behavior[pl]; ok {
		return b
	}
	if b, ok := a.behavior[""]; ok {
		return b
	}
	if pl == "email" {
		return BehaviorIgnore
	}
	if a.env.get(a.names(pl).AllowedUsers) != "" || a.env.get(EnvGatewayAllowedUsers) != "" {
		return BehaviorIgnore
	}
	return BehaviorPair
}

// AllowedRoles is the role list the platform's adapter checks members against
// (DISCORD_ALLOWED_ROLES) to set Source.RoleAuthorized.
func (a *Authorizer) AllowedRoles(pl string) []string {
	if key := a.names(pl).AllowedRoles; key != "" {
		return splitList(a.env.get(key))
	}
	return nil
}

// The texts the bot sends (upstream's words).
const (
	TooManyRequestsText = "Too many pairing requests right now~ Please try again later!"
)

// PairingCodeText is the reply that carries a new code.
func PairingCodeText(pl, code string) string {
	return "Hi~ I don't recognize you yet!\n\nHere's your pairing code: `" + code + "`\n\n" +
		"Ask the bot owner to run:\n`hermes pairing approve " + pl + " " + code + "`"
}

// PairingReply requests a code for a sender Check denied with Pair set and
// returns the text to send them: the code, TooManyRequestsText (the platform
// is full or locked; the sender is then rate-limited), or "" (they asked less
// than 10 minutes ago: say nothing). The code is in the text only: never log it.
func (a *Authorizer) PairingReply(ctx context.Context, src platform.Source) (string, error) {
	pl := strings.ToLower(src.Platform)
	code, err := a.pairing.Request(ctx, pl, strings.TrimSpace(src.UserID), src.UserName)
	switch {
	case err == nil:
		return PairingCodeText(pl, code), nil
	case errors.Is(err, ErrRateLimited):
		return "", nil
	case errors.Is(err, ErrTooManyPending), errors.Is(err, ErrLockedOut):
		return TooManyRequestsText, nil
	}
	return "", err
}

// StartupWarning is the warning the gateway logs at start when nothing lets
// anyone in (no allowlist, no allow-all, nobody paired) on the given platforms;
// "" when something does.
func (a *Authorizer) StartupWarning(platforms []string) string {
	keys := []string{EnvGatewayAllowedUsers}
	for _, pl := range platforms {
		n := a.names(strings.ToLower(pl))
		keys = append(keys, n.AllowedUsers, n.AllowedRoles)
		if truthy(a.env.get(n.AllowAll)) {
			return ""
		}
		if approved, err := a.pairing.ListApproved(strings.ToLower(pl)); err == nil && len(approved) > 0 {
			return ""
		}
	}
	for _, k := range keys {
		if k != "" && a.env.get(k) != "" {
			return ""
		}
	}
	if truthy(a.env.get(EnvGatewayAllowAll)) {
		return ""
	}
	return fmt.Sprintf("No user allowlists configured. All unauthorized users will be denied. "+
		"Set GATEWAY_ALLOW_ALL_USERS=true in %s to allow open access, "+
		"or configure platform allowlists (e.g., TELEGRAM_ALLOWED_USERS=your_id).", a.envPath)
}

// readBehaviors reads unauthorized_dm_behavior: the global key and every
// platform's, in the places upstream's docs put it (platforms.<p>., its
// extra., and a top-level <p>: block).
func readBehaviors(c ConfigReader) (map[string]DMBehavior, error) {
	out := map[string]DMBehavior{}
	if c == nil {
		return out, nil
	}
	const key = "unauthorized_dm_behavior"
	set := func(pl string, path []string) error {
		v, ok := c.GetPath(path)
		if !ok || v == nil {
			return nil
		}
		s, _ := v.(string)
		b := DMBehavior(strings.ToLower(strings.TrimSpace(s)))
		if b != BehaviorPair && b != BehaviorIgnore {
			return fmt.Errorf("config.yaml: %s is %v; use pair (answer unknown DMs with a pairing code) or ignore (drop them)",
				strings.Join(path, "."), v)
		}
		out[pl] = b
		return nil
	}
	if err := set("", []string{key}); err != nil {
		return nil, err
	}
	var names []string
	if m, ok := c.GetPath([]string{"platforms"}); ok {
		if pm, ok := m.(map[string]any); ok {
			for name := range pm {
				names = append(names, name)
			}
		}
	}
	sort.Strings(names)
	for _, name := range names {
		pl := strings.ToLower(name)
		// Both places are accepted; platforms.<p>.unauthorized_dm_behavior, read
		// last, wins over a copy in its extra.
		for _, path := range [][]string{{"platforms", name, "extra", key}, {"platforms", name, key}} {
			if err := set(pl, path); err != nil {
				return nil, err
			}
		}
	}
	for _, pl := range []string{"telegram", "discord", "whatsapp", "slack", "signal", "email"} {
		if _, done := out[pl]; done {
			continue
		}
		if err := set(pl, []string{pl, key}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Explain names what a rule read for platform pl, for messages: the variable,
// or the pairing store.
func (a *Authorizer) Explain(pl string, r Rule) string {
	n := a.names(strings.ToLower(pl))
	switch r {
	case RulePlatformAllowAll:
		return n.AllowAll
	case RulePaired:
		return "the pairing store"
	case RulePlatformAllowlist:
		return n.AllowedUsers
	case RulePlatformRole:
		return n.AllowedRoles
	case RuleGatewayAllowlist:
		return EnvGatewayAllowedUsers
	case RuleGatewayAllowAll:
		return EnvGatewayAllowAll
	}
	return "nothing"
}
