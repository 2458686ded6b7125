// Package approval guards the terminal tool: it classifies shell commands
// (hardline-blocked, dangerous, safe), applies the user's deny rules and permanent
// allowlist from config.yaml, and asks a human about dangerous commands.
//
// Config keys (upstream names):
//
//	command_allowlist: [pattern keys or exact commands]   # "always" answers land here
//	approvals:
//	  deny: ["git push*", "*terraform destroy*"]          # fnmatch globs, never run
package approval

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/hermes-go/hermes/internal/config"
)

// Config keys read and written by this package.
const (
	AllowlistKey = "command_allowlist"
	DenyKey      = "approvals.deny"
)

// Action is what the guard decided.
type Action int

const (
	Allow Action = iota // run it
	Ask                 // run it only if a human approves
	Block               // never run it
)

func (a Action) String() string {
	switch a {
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	}
	return "block"
}

// Decision is the guard's answer for one command.
type Decision struct {
	Action   Action
	Hardline *Finding // set when a hardline rule blocked it
	DenyRule string   // set when a user deny rule blocked it
	// Findings are the dangerous rules still needing approval (Action == Ask).
	Findings []Finding
	// Message says why a blocked command will not run (Action == Block).
	Message string
}

// PatternKeys lists the keys of the findings needing approval.
func (d Decision) PatternKeys() []string {
	out := make([]string, 0, len(d.Findings))
	for _, f := range d.Findings {
		out = append(out, f.Key)
	}
	return out
}

// Description joins the findings' descriptions for a prompt.
func (d Decision) Description() string {
	var parts []string
	for _, f := range d.Findings {
		parts = append(parts, f.Description())
	}
	return strings.Join(parts, "; ")
}

// Guard applies the built-in rules plus the user's deny rules and allowlist. The zero
// Guard has no user rules; a Guard from NewGuardFromStore reads config.yaml on its
// first check. Safe for concurrent use.
type Guard struct {
	Deny  []string // approvals.deny: fnmatch globs (case-insensitive), always blocked
	Allow []string // command_allowlist: pattern keys or exact commands, approved without asking
	// Places are the home directory and the profile's policy files the rules
	// protect (the zero value knows them only as ~ and $HOME).
	Places Places

	once    sync.Once
	load    func() (*config.Doc, error)
	loadErr error
}

// NewGuardFromStore returns a guard whose user rules come from the store's
// config.yaml, read once, lazily, so commands that never run a terminal command do
// not pay for it.
func NewGuardFromStore(store config.Store) *Guard {
	return &Guard{load: store.Load}
}

// NewGuardFromDoc returns a guard with the user rules of an already parsed config.
func NewGuardFromDoc(doc *config.Doc) *Guard {
	g := &Guard{}
	g.Deny, g.Allow = UserRules(doc)
	g.once.Do(func() {})
	return g
}

// UserRules reads approvals.deny and command_allowlist from doc. Non-string entries
// are skipped; a single string counts as a one-item list (upstream accepts both).
func UserRules(doc *config.Doc) (deny, allow []string) {
	if doc == nil {
		return nil, nil
	}
	return stringList(doc, DenyKey), stringList(doc, AllowlistKey)
}

func stringList(doc *config.Doc, key string) []string {
	v, ok := doc.Get(key)
	if !ok {
		return nil
	}
	var items []any
	switch v := v.(type) {
	case []any:
		items = v
	case string:
		items = []any{v}
	}
	var out []string
	for _, it := range items {
		if s, ok := it.(string); ok && strings.TrimSpace(s) != "" {
			out = append(out, strings.TrimSpace(s))
		}
	}
	return out
}

func (g *Guard) ensure() {
	g.once.Do(func() {
		if g.load == nil {
			return
		}
		doc, err := g.load()
		if err != nil {
			g.loadErr = err
			return
		}
		deny, allow := UserRules(doc)
		g.Deny = append(g.Deny, deny...)
		g.Allow = append(g.Allow, allow...)
	})
}

// Check decides about one command. Order (as upstream): hardline rules, then the
// user's deny rules, then the dangerous rules minus what the allowlist covers.
func (g *Guard) Check(cmd string) Decision {
	if g == nil {
		g = &Guard{}
	}
	g.ensure()
	v := ClassifyIn(cmd, g.Places)
	if v.Hardline != nil {
		return Decision{Action: Block, Hardline: v.Hardline, Message: HardlineMessage(v.Hardline.Key)}
	}
	if g.loadErr != nil {
		// The deny rules could not be read: do not guess that none apply.
		return Decision{Action: Block, Message: fmt.Sprintf(
			"BLOCKED: the approval rules in config.yaml could not be read (%v); fix config.yaml and try again.", g.loadErr)}
	}
	if rule := matchDeny(cmd, g.Deny); rule != "" {
		return Decision{Action: Block, DenyRule: rule, Message: DenyMessage(rule)}
	}
	if exactAllowed(cmd, g.Allow) {
		return Decision{Action: Allow}
	}
	var left []Finding
	for _, f := range v.Dangerous {
		if !contains(g.Allow, f.Key) {
			left = append(left, f)
		}
	}
	if len(left) == 0 {
		return Decision{Action: Allow}
	}
	return Decision{Action: Ask, Findings: left}
}

// HardlineMessage is the tool error for a hardline block.
func HardlineMessage(key string) string {
	return fmt.Sprintf("BLOCKED (hardline): %s. This command is on the unconditional blocklist and cannot be "+
		"executed via the agent, whatever anyone answers. If you genuinely need to run it, run it yourself in a "+
		"terminal outside the agent.", key)
}

// DenyMessage is the tool error for a user deny rule.
func DenyMessage(rule string) string {
	return fmt.Sprintf("BLOCKED: this command matches the user-defined deny rule '%s' (approvals.deny in "+
		"config.yaml). It cannot be executed via the agent. Do NOT retry or rephrase this command; the user has "+
		"explicitly forbidden it.", rule)
}

// exactAllowed: a command_allowlist entry that is the command itself (or a glob
// matching it) approves it, as long as the command is one simple command; a
// compound line could hide anything behind an allowed prefix.
func exactAllowed(cmd string, allow []string) bool {
	cmd = strings.TrimSpace(cmd)
	if cmd == "" || strings.ContainsAny(cmd, ";&|<>`$()\n") {
		return false
	}
	for _, p := range allow {
		if p == cmd || (strings.ContainsAny(p, "*?[") && globMatch(p, cmd, false)) {
			return true
		}
	}
	return false
}

// matchDeny returns the first deny glob matching the whole command or any simple
// command inside it (so "cd x && git push" is caught by "git push*").
func matchDeny(cmd string, globs []string) string {
	if len(globs) == 0 {
		return ""
	}
	cands := []string{strings.TrimSpace(cmd)}
	for _, c := range analyze(cmd, &Places{}).cmds {
		cands = append(cands, strings.Join(c.words, " "))
		if len(c.wrappers) > 0 && c.name != "" {
			cands = append(cands, strings.Join(append([]string{c.name}, c.args...), " "))
		}
	}
	for _, g := range globs {
		for _, c := range cands {
			if globMatch(g, c, true) {
				return g
			}
		}
	}
	return ""
}

var globCache sync.Map // pattern → *regexp.Regexp

// globMatch is Python's fnmatch: * and ? match any character including "/".
func globMatch(pattern, s string, fold bool) bool {
	key := pattern
	if fold {
		key = "(?i)" + pattern
	}
	if re, ok := globCache.Load(key); ok {
		return re.(*regexp.Regexp).MatchString(s)
	}
	var sb strings.Builder
	sb.WriteString("(?s)")
	if fold {
		sb.WriteString("(?i)")
	}
	sb.WriteString("^")
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; c {
		case '*':
			sb.WriteString(".*")
		case '?':
			sb.WriteString(".")
		case '[':
			j := strings.IndexByte(pattern[i+1:], ']')
			if j < 0 {
				sb.WriteString(`\[`)
				continue
			}
			class := pattern[i+1 : i+1+j]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			sb.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += j + 1
		default:
			sb.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	sb.WriteString("$")
	re, err := regexp.Compile(sb.String())
	if err != nil {
		return false
	}
	globCache.Store(key, re)
	return re.MatchString(s)
}
