package approval

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/hermes-go/hermes/internal/lazyre"
)

// Finding is one rule a command tripped. Key is the pattern_key used in approvals
// (command_allowlist entries, session approvals, hook payloads); like upstream, it
// is the rule's description.
type Finding struct {
	Key      string `json:"pattern_key"`
	Hardline bool   `json:"hardline"`
}

// Description is what the rule means, for prompts and block messages.
func (f Finding) Description() string { return f.Key }

// Verdict is what Classify found in a command.
type Verdict struct {
	Hardline  *Finding  // set: the command never runs
	Dangerous []Finding // approval needed, one per distinct rule, in rule order
}

// PatternKeys lists the keys of the dangerous findings.
func (v Verdict) PatternKeys() []string {
	out := make([]string, 0, len(v.Dangerous))
	for _, f := range v.Dangerous {
		out = append(out, f.Key)
	}
	return out
}

// Pattern keys. Where upstream has the rule, its description is the key, so
// command_allowlist entries carry over.
const (
	KeyRootDelete      = "recursive delete of root filesystem"
	KeySystemDelete    = "recursive delete of system directory"
	KeyHomeDelete      = "recursive delete of home directory"
	KeyMkfsDevice      = "format filesystem (mkfs)"
	KeyWipeDevice      = "wipe raw block device"
	KeyDDDevice        = "dd to raw block device"
	KeyRedirectDevice  = "redirect to raw block device"
	KeyForkBomb        = "fork bomb"
	KeyKillAll         = "kill all processes"
	KeyShutdown        = "system shutdown/reboot"
	KeyChmodRoot       = "recursive world-writable permissions on a system path"
	KeyUnparseableHard = "unparseable command that looks destructive"

	KeyRootPathDelete   = "delete in root path"
	KeyRecursiveDelete  = "recursive delete"
	KeyWorldWritable    = "world/other-writable permissions"
	KeyChownRoot        = "recursive chown to root"
	KeyMkfs             = "format filesystem"
	KeyDiskCopy         = "disk copy"
	KeySQLDrop          = "SQL DROP"
	KeySQLDelete        = "SQL DELETE without WHERE"
	KeySQLTruncate      = "SQL TRUNCATE"
	KeyEtcRedirect      = "overwrite system config"
	KeySensitiveRedir   = "overwrite system file via redirection"
	KeyTee              = "overwrite system file via tee"
	KeyCopyEtc          = "copy/move file into system config path"
	KeySedEtc           = "in-place edit of system config"
	KeyService          = "stop/restart system service"
	KeyForceKill        = "force kill processes"
	KeyKillallRegex     = "kill processes by regex (killall -r)"
	KeySelfKill         = "kill hermes/gateway process (self-termination)"
	KeyCurlPipe         = "pipe remote content to shell"
	KeyProcSubst        = "execute remote script via process substitution"
	KeyCmdSubst         = "execute remote content via command substitution"
	KeyDecodePipe       = "pipe decoded content to shell (possible command obfuscation)"
	KeyXargsRm          = "xargs with rm"
	KeyFindExecRm       = "find -exec/-execdir rm"
	KeyFindDelete       = "find -delete"
	KeyGitReset         = "git reset --hard (destroys uncommitted changes)"
	KeyGitForcePush     = "git force push (rewrites remote history)"
	KeyGitForcePushF    = "git force push short flag (rewrites remote history)"
	KeyGitClean         = "git clean with force (deletes untracked files)"
	KeyGitBranchD       = "git branch force delete"
	KeySudoFlags        = "sudo with privilege flag (stdin/askpass/shell/list)"
	KeySudo             = "run as root (sudo)"
	KeySu               = "switch user (su)"
	KeyMetadata         = "cloud metadata endpoint access (instance credentials)"
	KeyHermesGateway    = "stop/restart hermes gateway (kills running agents)"
	KeyUnparseable      = "unparseable shell command"
	KeyDynamicRmCommand = "command name chosen at run time"
)

type cmdRule struct {
	key      string
	hardline bool
	match    func(c *command) bool
}

// hardlineRules never run, whatever anyone answers.
var hardlineRules = []cmdRule{
	{KeyRootDelete, true, func(c *command) bool { return c.name == "rm" && anyOperand(c.args, isRootPath) }},
	{KeySystemDelete, true, func(c *command) bool { return c.name == "rm" && anyOperand(c.args, isSystemDir) }},
	{KeyHomeDelete, true, func(c *command) bool { return c.name == "rm" && anyOperand(c.args, c.places.isHomeDir) }},
	{KeyMkfsDevice, true, func(c *command) bool {
		return (isMkfs(c.name) || c.name == "mkswap" || strings.HasPrefix(c.name, "newfs")) && anyOperand(c.args, isBlockDevice)
	}},
	{KeyWipeDevice, true, isDeviceWipe},
	{KeyDDDevice, true, func(c *command) bool {
		if c.name != "dd" {
			return false
		}
		for _, a := range c.args {
			if v, ok := strings.CutPrefix(a, "of="); ok && isBlockDevice(v) {
				return true
			}
		}
		return false
	}},
	{KeyKillAll, true, func(c *command) bool {
		if c.name != "kill" {
			return false
		}
		for _, p := range killTargets(c.args) {
			if p == "-1" {
				return true
			}
		}
		return false
	}},
	{KeyShutdown, true, func(c *command) bool {
		switch c.name {
		case "shutdown", "reboot", "halt", "poweroff":
			return true
		case "init", "telinit":
			ops := operands(c.args)
			return len(ops) > 0 && (ops[0] == "0" || ops[0] == "6")
		case "systemctl":
			ops := operands(c.args)
			return len(ops) > 0 && oneOf(ops[0], "poweroff", "reboot", "halt", "kexec")
		}
		return false
	}},
	{KeyChmodRoot, true, func(c *command) bool {
		if c.name != "chmod" || !recursive(c.args) {
			return false
		}
		ops := operands(c.args)
		if len(ops) < 2 || !worldWritable(ops[0]) {
			return false
		}
		return anyOperand(ops[1:], func(p string) bool { return isRootPath(p) || isSystemDir(p) || c.places.isHomeDir(p) })
	}},
}

// dangerousRules need approval.
var dangerousRules = []cmdRule{
	{KeyRootPathDelete, false, func(c *command) bool {
		return c.name == "rm" && anyOperand(c.args, func(p string) bool { return strings.HasPrefix(p, "/") })
	}},
	{KeyRecursiveDelete, false, func(c *command) bool { return c.name == "rm" && recursive(c.args) }},
	{KeyWorldWritable, false, func(c *command) bool {
		ops := operands(c.args)
		return c.name == "chmod" && len(ops) > 0 && worldWritable(ops[0])
	}},
	{KeyChownRoot, false, func(c *command) bool {
		ops := operands(c.args)
		return c.name == "chown" && recursive(c.args) && len(ops) > 0 && (ops[0] == "root" || strings.HasPrefix(ops[0], "root:") || strings.HasPrefix(ops[0], "0:") || ops[0] == "0")
	}},
	{KeyMkfs, false, func(c *command) bool { return isMkfs(c.name) }},
	{KeyDiskCopy, false, func(c *command) bool { return c.name == "dd" && anyArgPrefix(c.args, "if=") }},
	{KeyTee, false, func(c *command) bool { return c.name == "tee" && anyOperand(c.args, c.places.isSensitiveWrite) }},
	{KeyCopyEtc, false, func(c *command) bool {
		if !oneOf(c.name, "cp", "mv", "install", "ln", "rsync") {
			return false
		}
		ops := operands(c.args)
		return len(ops) >= 2 && c.places.isSensitiveWrite(ops[len(ops)-1])
	}},
	{KeySedEtc, false, func(c *command) bool {
		inPlace := false
		switch c.name {
		case "sed":
			for _, a := range c.args {
				if a == "--in-place" || strings.HasPrefix(a, "--in-place=") || (strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "i")) {
					inPlace = true
				}
			}
		case "perl", "ruby":
			for _, a := range c.args {
				if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "i") {
					inPlace = true
				}
			}
		}
		return inPlace && anyOperand(c.args, c.places.isSensitiveWrite)
	}},
	{KeyService, false, func(c *command) bool {
		ops := operands(c.args)
		return c.name == "systemctl" && len(ops) > 0 && oneOf(ops[0], "stop", "restart", "disable", "mask", "kill")
	}},
	{KeyForceKill, false, func(c *command) bool {
		if c.name != "pkill" && c.name != "killall" {
			return false
		}
		for i, a := range c.args {
			if oneOf(a, "-9", "-KILL", "-SIGKILL", "--signal=9", "--signal=KILL", "--signal=SIGKILL") {
				return true
			}
			if (a == "-s" || a == "--signal") && i+1 < len(c.args) && oneOf(strings.ToUpper(c.args[i+1]), "9", "KILL", "SIGKILL") {
				return true
			}
		}
		return false
	}},
	{KeyKillallRegex, false, func(c *command) bool { return c.name == "killall" && hasShort(c.args, 'r') }},
	{KeySelfKill, false, func(c *command) bool {
		if c.name != "pkill" && c.name != "killall" {
			return false
		}
		return anyOperand(c.args, func(a string) bool { return strings.Contains(strings.ToLower(a), "hermes") })
	}},
	{KeyXargsRm, false, func(c *command) bool { return c.has("xargs") && c.name == "rm" }},
	{KeyFindExecRm, false, func(c *command) bool {
		if c.name != "find" {
			return false
		}
		for i, a := range c.args {
			if (a == "-exec" || a == "-execdir" || a == "-ok" || a == "-okdir") && i+1 < len(c.args) && path.Base(c.args[i+1]) == "rm" {
				return true
			}
		}
		return false
	}},
	{KeyFindDelete, false, func(c *command) bool { return c.name == "find" && contains(c.args, "-delete") }},
	{KeyGitReset, false, func(c *command) bool {
		sub, rest := gitSub(c)
		return sub == "reset" && anyArg(rest, func(a string) bool { return len(a) >= 3 && strings.HasPrefix("--hard", a) })
	}},
	{KeyGitForcePush, false, func(c *command) bool {
		sub, rest := gitSub(c)
		return sub == "push" && anyArg(rest, func(a string) bool { return strings.HasPrefix(a, "--forc") })
	}},
	{KeyGitForcePushF, false, func(c *command) bool {
		sub, rest := gitSub(c)
		return sub == "push" && (hasShort(rest, 'f') || anyOperand(rest, func(a string) bool { return strings.HasPrefix(a, "+") }))
	}},
	{KeyGitClean, false, func(c *command) bool {
		sub, rest := gitSub(c)
		return sub == "clean" && (hasShort(rest, 'f') || contains(rest, "--force"))
	}},
	{KeyGitBranchD, false, func(c *command) bool {
		sub, rest := gitSub(c)
		if sub != "branch" {
			return false
		}
		if hasShortCase(rest, 'D') {
			return true
		}
		del := hasShortCase(rest, 'd') || contains(rest, "--delete")
		force := hasShortCase(rest, 'f') || contains(rest, "--force")
		return del && force
	}},
	{KeySudoFlags, false, func(c *command) bool {
		for _, a := range c.sudoArgs {
			if oneOf(a, "--stdin", "--askpass", "--shell", "--login") {
				return true
			}
			if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsAny(a[1:], "SAsi") {
				return true
			}
		}
		return false
	}},
	{KeySudo, false, func(c *command) bool { return c.has("sudo") || c.has("doas") || c.name == "sudo" || c.name == "doas" }},
	{KeySu, false, func(c *command) bool { return c.name == "su" }},
	{KeyHermesGateway, false, func(c *command) bool {
		if c.name != "hermes" {
			return false
		}
		ops := operands(c.args)
		return (len(ops) >= 2 && ops[0] == "gateway" && oneOf(ops[1], "stop", "restart")) || (len(ops) >= 1 && ops[0] == "update")
	}},
}

var (
	sqlDrop     = lazyre.New(`(?i)\bDROP\s+(TABLE|DATABASE|SCHEMA)\b`)
	sqlDelete   = lazyre.New(`(?i)\bDELETE\s+FROM\b`)
	sqlWhere    = lazyre.New(`(?i)\bWHERE\b`)
	sqlTruncate = lazyre.New(`(?i)\bTRUNCATE\s+(TABLE\s+)?\w`)
	metadata    = lazyre.New(`(^|[^\d.])(169\.254\.169\.254|100\.100\.100\.200)([^\d.]|$)|metadata\.google\.internal|fd00:ec2::254`)
	blockDevice = lazyre.New(`^/dev/((sd|hd|vd|xvd|nvme|mmcblk|md|dm-|loop|nbd)[a-z0-9]*|r?disk[0-9]+[a-z0-9]*|mapper/.+|disk/by-(id|uuid|path|label|partuuid|partlabel)/.+)$`)
	// Raw-text fallbacks for lines the parser could not read.
	rawForkBomb = lazyre.New(`:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:`)
	rawRootRm   = lazyre.New(`(^|[;&|(\s])rm\s+(-\S+\s+)*("|')?(/|/\*|~/?|\$HOME/?)("|')?(\s|$|[;&|)])`)
)

// Places are the paths the rules judge by that depend on who runs hermes.
type Places struct {
	// UserHome is the user's home directory ("": only the ~ and $HOME spellings
	// name it).
	UserHome string
	// Policy are the files whose overwrite changes what Hermes allows: the
	// config.yaml and .env of the profile in use.
	Policy []string
}

// Classify is ClassifyIn with no Places: it knows the home directory and
// ~/.hermes only by their ~ and $HOME spellings.
func Classify(cmd string) Verdict { return ClassifyIn(cmd, Places{}) }

// ClassifyIn says whether command is hardline-blocked, needs approval, or neither.
// It reads the command as bash would: quoted text is data (echo "rm -rf /" is
// harmless) but text handed to another shell (bash -c, eval, sh <<EOF, echo … | sh)
// is code.
func ClassifyIn(cmd string, places Places) Verdict {
	a := analyze(cmd, &places)
	var v Verdict
	seen := map[string]bool{}
	hard := func(key string) {
		if v.Hardline == nil {
			v.Hardline = &Finding{Key: key, Hardline: true}
		}
	}
	add := func(key string) {
		if !seen[key] {
			seen[key] = true
			v.Dangerous = append(v.Dangerous, Finding{Key: key})
		}
	}

	if a.forkBomb {
		hard(KeyForkBomb)
	}
	for _, r := range hardlineRules {
		for _, c := range a.cmds {
			if r.match(c) {
				hard(r.key)
			}
		}
	}
	for _, r := range a.redirs {
		if writes(r.op) && isBlockDevice(r.target) {
			hard(KeyRedirectDevice)
		}
	}
	// cd / && rm -rf * : the relative operand means whatever the cd reached.
	cwdKey := ""
	for _, c := range a.cmds {
		switch {
		case c.name == "cd" || c.name == "pushd":
			cwdKey = ""
			if ops := operands(c.args); len(ops) == 0 {
				cwdKey = KeyHomeDelete // plain cd goes home
			} else if d := ops[0]; isRootPath(d) {
				cwdKey = KeyRootDelete
			} else if isSystemDir(d) {
				cwdKey = KeySystemDelete
			} else if a.places.isHomeDir(d) {
				cwdKey = KeyHomeDelete
			}
		case c.name == "rm" && cwdKey != "" && recursive(c.args):
			if anyOperand(c.args, func(p string) bool { return oneOf(p, "*", ".", "./", "./*", ".*") }) {
				hard(cwdKey)
			}
		}
	}
	for _, line := range a.unparsed {
		if rawForkBomb.MatchString(line) {
			hard(KeyForkBomb)
		}
		if rawRootRm.MatchString(line) {
			hard(KeyUnparseableHard)
		}
	}
	if v.Hardline != nil {
		return v
	}

	for _, r := range dangerousRules {
		for _, c := range a.cmds {
			if r.match(c) {
				add(r.key)
				break
			}
		}
	}
	for _, r := range a.redirs {
		if !writes(r.op) {
			continue
		}
		switch {
		case isBlockDevice(r.target):
			add(KeyRedirectDevice)
		case isEtc(r.target):
			add(KeyEtcRedirect)
		case a.places.isSensitiveWrite(r.target):
			add(KeySensitiveRedir)
		}
	}
	a.pipeRules(add)
	a.textRules(add)
	for _, c := range a.cmds {
		if c.name == "" && len(c.args) > 0 && (anyOperand(c.args, isRootPath) || recursive(c.args)) {
			// $cmd -rf / : the program is unknown until run time.
			add(KeyDynamicRmCommand)
		}
	}
	if len(a.unparsed) > 0 {
		add(KeyUnparseable)
	}
	return v
}

func (a *analysis) pipeRules(add func(string)) {
	fetches := func(cs []*command) bool {
		for _, c := range cs {
			if oneOf(c.name, "curl", "wget", "fetch", "aria2c") {
				return true
			}
		}
		return false
	}
	decodes := func(cs []*command) bool {
		for _, c := range cs {
			switch c.name {
			case "base64", "base32", "base16":
				if contains(c.args, "-d") || contains(c.args, "-D") || contains(c.args, "--decode") {
					return true
				}
			case "xxd":
				if hasShort(c.args, 'r') {
					return true
				}
			case "openssl":
				if contains(c.args, "-d") {
					return true
				}
			}
		}
		return false
	}
	for _, stages := range a.pipes {
		for i := 1; i < len(stages); i++ {
			if len(stages[i]) == 0 || !shellNames[stages[i][0].name] {
				continue
			}
			for j := 0; j < i; j++ {
				if fetches(stages[j]) {
					add(KeyCurlPipe)
				}
				if decodes(stages[j]) {
					add(KeyDecodePipe)
				}
			}
		}
	}
	anyFetch := fetches(a.cmds)
	if !anyFetch {
		return
	}
	for _, c := range a.cmds {
		switch {
		case (shellNames[c.name] || c.name == "source" || c.name == ".") && contains(c.args, "<(…)"):
			add(KeyProcSubst)
		case c.name == "eval" || c.name == "source" || c.name == ".":
			if anyArg(c.args, func(s string) bool { return strings.Contains(s, "$(…)") }) {
				add(KeyCmdSubst)
			}
		case shellNames[c.name]:
			if p, ok := dashC(c.args); ok && strings.Contains(p, "$(…)") {
				add(KeyCmdSubst)
			}
		}
	}
}

func (a *analysis) textRules(add func(string)) {
	check := func(s string) {
		if sqlDrop.MatchString(s) {
			add(KeySQLDrop)
		}
		for _, stmt := range strings.Split(s, ";") {
			if loc := sqlDelete.FindStringIndex(stmt); loc != nil && !sqlWhere.MatchString(stmt[loc[1]:]) {
				add(KeySQLDelete)
			}
		}
		if sqlTruncate.MatchString(s) {
			add(KeySQLTruncate)
		}
		if metadata.MatchString(s) {
			add(KeyMetadata)
		}
	}
	for _, c := range a.cmds {
		if textOnly[c.name] {
			continue // printing or searching for SQL is not running it
		}
		for _, w := range c.words {
			check(w)
		}
	}
	for _, t := range a.texts {
		check(t)
	}
}

// textOnly programs treat their arguments as text to print or search, never to run.
var textOnly = map[string]bool{"echo": true, "printf": true, "grep": true, "egrep": true, "fgrep": true, "rg": true,
	"ag": true, "ack": true, "git": true, "cat": true, "less": true, "man": true, "jq": true}

func writes(op syntax.RedirOperator) bool {
	switch op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrAll, syntax.AppAll, syntax.RdrClob, syntax.RdrInOut:
		return true
	}
	return false
}

// operands are the non-option arguments (everything after "--" counts).
func operands(args []string) []string {
	var out []string
	dash := false
	for _, a := range args {
		if !dash && a == "--" {
			dash = true
			continue
		}
		if dash || !strings.HasPrefix(a, "-") || a == "-" {
			out = append(out, a)
		}
	}
	return out
}

func anyOperand(args []string, f func(string) bool) bool { return anyArg(operands(args), f) }

func anyArg(args []string, f func(string) bool) bool {
	for _, a := range args {
		if f(a) {
			return true
		}
	}
	return false
}

func anyArgPrefix(args []string, p string) bool {
	return anyArg(args, func(a string) bool { return strings.HasPrefix(a, p) })
}

// options are the arguments before "--" that start with a dash.
func options(args []string) []string {
	var out []string
	for _, a := range args {
		if a == "--" {
			break
		}
		if strings.HasPrefix(a, "-") && a != "-" {
			out = append(out, a)
		}
	}
	return out
}

// hasShort reports a short option letter, case-insensitively (-rf, -R, -fr).
func hasShort(args []string, r rune) bool {
	return hasShortCase(args, r) || hasShortCase(args, []rune(strings.ToUpper(string(r)))[0])
}

func hasShortCase(args []string, r rune) bool {
	for _, o := range options(args) {
		if !strings.HasPrefix(o, "--") && strings.ContainsRune(o[1:], r) {
			return true
		}
	}
	return false
}

func recursive(args []string) bool {
	return hasShort(args, 'r') || contains(options(args), "--recursive")
}

func contains(args []string, s string) bool {
	for _, a := range args {
		if a == s {
			return true
		}
	}
	return false
}

func oneOf(s string, opts ...string) bool { return contains(opts, s) }

// killTargets are the pid operands of kill, after its signal option.
func killTargets(args []string) []string {
	i := 0
	if i < len(args) && (args[i] == "-s" || args[i] == "-n") {
		i += 2
	} else if i < len(args) && strings.HasPrefix(args[i], "-") && args[i] != "--" {
		i++
	}
	if i < len(args) && args[i] == "--" {
		i++
	}
	if i > len(args) {
		return nil
	}
	return args[i:]
}

// gitSub returns git's subcommand and its arguments, skipping global options.
func gitSub(c *command) (string, []string) {
	if c.name != "git" {
		return "", nil
	}
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		if oneOf(a, "-C", "-c", "--git-dir", "--work-tree", "--namespace") {
			i++
			continue
		}
		if strings.HasPrefix(a, "-") {
			continue
		}
		return a, c.args[i+1:]
	}
	return "", nil
}

func isMkfs(name string) bool {
	return name == "mkfs" || strings.HasPrefix(name, "mkfs.") || name == "mke2fs"
}

func isDeviceWipe(c *command) bool {
	switch c.name {
	case "shred", "blkdiscard":
	case "wipefs":
		if !(hasShortCase(c.args, 'a') || contains(c.args, "--all")) || hasShortCase(c.args, 'n') || contains(c.args, "--no-act") {
			return false
		}
	case "sgdisk":
		if !(hasShort(c.args, 'z') || hasShortCase(c.args, 'o') || contains(c.args, "--zap-all") || contains(c.args, "--clear")) {
			return false
		}
	default:
		return false
	}
	return anyOperand(c.args, isBlockDevice)
}

// worldWritable reports a chmod mode giving write to others: 777, 0666, o+w, a+rwx.
func worldWritable(mode string) bool {
	if mode == "" {
		return false
	}
	if strings.Trim(mode, "01234567") == "" {
		last := mode[len(mode)-1]
		return len(mode) >= 3 && strings.IndexByte("2367", last) >= 0
	}
	for _, clause := range strings.Split(mode, ",") {
		i := strings.IndexAny(clause, "+=")
		if i < 0 {
			continue
		}
		who, perms := clause[:i], clause[i+1:]
		if strings.ContainsAny(who, "oa") && strings.Contains(perms, "w") {
			return true
		}
	}
	return false
}
