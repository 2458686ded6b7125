package scan

import (
	"bytes"
	"fmt"
	"strings"
	"sync"

	"github.com/hermes-go/hermes/internal/lazyre"
)

// The threat catalogue: upstream's THREAT_PATTERNS (skills_guard "skills-guard-v4",
// reference §9.4) with the same ids, severities, categories and descriptions. Go's
// regexp has no look-around, so the few upstream patterns that use it are a regular
// expression plus a small check in Go (match.go) with the same meaning.
//
// Every rule names literals (lits, lower case) of which at least one must occur on a
// line for the rule to match: the Aho-Corasick prefilter finds them, and a rule's
// regular expression only runs on lines that hold one. TestRuleLiterals checks that
// every corpus sample that fires also contains one of its rule's literals.

type rule struct {
	id, sev, cat, desc string
	lits               []string
	re                 *lazyre.Regexp
	// fn, when set, decides instead of re (look-around the RE2 syntax lacks); loc
	// then locates the rule's text on a line (for the quoted-fixture demotion).
	fn  func(line []byte) bool
	loc *lazyre.Regexp
	idx int
	// Cheaper checks before the expression runs (prefilter.go): anchored is the rule
	// anchored at its literal, for rules whose every match starts with one; need are
	// groups of which each must have a member on the line (lower case); pre looks at
	// the bytes around the literal.
	anchored *lazyre.Regexp
	need     [][]string
	pre      func(data []byte, start int) bool
}

// locator is the expression that finds the rule's text on a line.
func (r *rule) locator() *lazyre.Regexp {
	if r.re != nil {
		return r.re
	}
	return r.loc
}

func (r *rule) match(line []byte) bool {
	if r.fn != nil {
		return r.fn(line)
	}
	return r.re.Match(line)
}

func ci(p string) *lazyre.Regexp { return lazyre.New(`(?i)` + p) }

const (
	sevCritical = "critical"
	sevHigh     = "high"
	sevMedium   = "medium"
	sevLow      = "low"
)

const (
	modifyVerb = `(?:\bwrit(?:e|es|ing)\b|\bwritten\b|\bedit(?:s|ed|ing)?\b` +
		`|\bmodif(?:y|ies|ied|ying|ication)s?\b|\bupdat(?:e|es|ed|ing)\b` +
		`|\bappend(?:s|ed|ing)?\b|\bprepend(?:s|ed|ing)?\b` +
		`|\binject(?:s|ed|ing)?\b|\boverwrit(?:e|es|ing)\b|\boverwritten\b` +
		`|\breplac(?:e|es|ed|ing)\b|\balter(?:s|ed|ing)?\b|\badd(?:s|ed|ing)\b)`
	agentConfigFiles  = `(?:AGENTS\.md|CLAUDE\.md|\.cursorrules|\.clinerules)`
	hermesConfigFiles = `\.hermes/(?:config\.yaml|SOUL\.md)`
	otherConfigFiles  = `\.(?:claude/settings|codex/config)[\w.]*`
	secretWord        = `(?:KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL)S?\b`
)

var (
	agentLits  = []string{"agents.md", "claude.md", ".cursorrules", ".clinerules"}
	hermesLits = []string{".hermes/config.yaml", ".hermes/soul.md"}
	otherLits  = []string{".claude/settings", ".codex/config"}
)

func proseModifyRe(file string) *lazyre.Regexp {
	return ci(`^\s*(?:[-*+]\s+|\d+[.)]\s+)?` + modifyVerb + `[^\n,]{0,80}?` + file + `\b` +
		`|(?:\byou\s+(?:must|should|need\s+to)\s+|\bplease\s+|\bmake\s+sure\s+(?:to\s+|you\s+)|\bbe\s+sure\s+to\s+)` +
		modifyVerb + `[^\n,]{0,80}?` + file + `\b`)
}

func shellWriteRe(file string) *lazyre.Regexp {
	return ci(`(?:>>|[\w"'` + "`" + `)\]]\s*>)\s*[~\w./-]*` + file +
		`|\bsed\b[^\n]*\s(?:-[A-Za-z]*i[A-Za-z]*|--in-place)\b[^\n]*` + file +
		`|\btee\s+(?:-a\s+)?[~\w./"'-]*` + file +
		`|\b(?:cp|mv)\s+[^\s|;&]+\s+[^\n|;&]{0,40}?` + file)
}

// rules is the catalogue in upstream's order (the order findings of one line are
// listed in). Our own correlation rule is added by correlate.go, not here.
// getRules builds the catalogue on first use (its expressions compile lazily too).
var getRules = sync.OnceValue(buildRules)

func buildRules() []*rule {
	var rs []*rule
	add := func(id, sev, cat, desc string, lits []string, re *lazyre.Regexp, fn func([]byte) bool) {
		rs = append(rs, &rule{id: id, sev: sev, cat: cat, desc: desc, lits: lits, re: re, fn: fn, idx: len(rs)})
	}
	R := func(id, sev, cat, desc string, lits []string, pattern string) {
		add(id, sev, cat, desc, lits, ci(pattern), nil)
	}
	F := func(id, sev, cat, desc string, lits []string, fn func([]byte) bool) {
		add(id, sev, cat, desc, lits, nil, fn)
	}
	L := func(s ...string) []string { return s }

	// ── Exfiltration: shell commands leaking secrets ──
	F("env_exfil_curl", sevCritical, "exfiltration", "curl command interpolating secret environment variable",
		L("curl"), notLoopbackAfter(ci(`curl\s+`), ci(`\$\{?\w*`+secretWord)))
	F("env_exfil_wget", sevCritical, "exfiltration", "wget command interpolating secret environment variable",
		L("wget"), notLoopbackAfter(ci(`wget\s+`), ci(`\$\{?\w*`+secretWord)))
	F("env_exfil_fetch", sevCritical, "exfiltration", "fetch() call interpolating secret environment variable",
		L("fetch"), notLoopbackAfter(ci(`fetch\s*\(`), ci(`\$\{?\w*(?:KEY|TOKEN|SECRET|PASSWORD)S?\b`)))
	F("env_exfil_httpx", sevCritical, "exfiltration", "HTTP library call with secret variable",
		L("http.", "httpx."), notLoopbackAfter(ci(`httpx?\.(?:get|post|put|patch)\s*\(`), ci(`KEY|TOKEN|SECRET|PASSWORD`)))
	F("env_exfil_requests", sevCritical, "exfiltration", "requests library call with secret variable",
		L("requests."), notLoopbackAfter(ci(`requests\.(?:get|post|put|patch)\s*\(`), ci(`KEY|TOKEN|SECRET|PASSWORD`)))
	// ── Exfiltration: reading credential stores ──
	R("encoded_exfil", sevHigh, "exfiltration", "base64 encoding combined with environment access",
		L("base64"), `base64[^\n]*env`)
	R("ssh_dir_access", sevHigh, "exfiltration", "references user SSH directory", L("/.ssh"), `\$HOME/\.ssh|~/\.ssh`)
	R("aws_dir_access", sevHigh, "exfiltration", "references user AWS credentials directory", L("/.aws"), `\$HOME/\.aws|~/\.aws`)
	R("gpg_dir_access", sevHigh, "exfiltration", "references user GPG keyring", L("/.gnupg"), `\$HOME/\.gnupg|~/\.gnupg`)
	R("kube_dir_access", sevHigh, "exfiltration", "references Kubernetes config directory", L("/.kube"), `\$HOME/\.kube|~/\.kube`)
	R("docker_dir_access", sevHigh, "exfiltration", "references Docker config (may contain registry creds)",
		L("/.docker"), `\$HOME/\.docker|~/\.docker`)
	R("hermes_env_access", sevCritical, "exfiltration", "directly references Hermes secrets file",
		L("/.hermes/.env"), `\$HOME/\.hermes/\.env|~/\.hermes/\.env`)
	// `cat <secrets-file>` reads credentials; `cat >` writes one (a setup heredoc).
	R("read_secrets_file", sevCritical, "exfiltration", "reads known secrets file",
		L(".env", "credentials", ".netrc", ".pgpass", ".npmrc", ".pypirc"),
		`cat\s(?:[^>\n][^\n]*)?(?:\.env|credentials|\.netrc|\.pgpass|\.npmrc|\.pypirc)`)
	F("js_read_secrets_file", sevCritical, "exfiltration", "JavaScript reads a known credential file",
		L("readfile", "readtextfile"), jsReadSecrets)
	// ── Exfiltration: programmatic env access ──
	R("dump_all_env", sevHigh, "exfiltration", "dumps all environment variables", L("printenv", "env|", "env |", "env  ", "env\t"), `printenv|env\s*\|`)
	F("python_os_environ", sevHigh, "exfiltration", "accesses os.environ outside comments/docstrings (potential env dump)",
		L("os.environ"), pythonOsEnviron)
	R("python_environ_get_secret", sevMedium, "exfiltration",
		"reads secret via os.environ.Get() (normal API-key access; informational)",
		L("os.environ"), `os\.environ\s*\.get\s*\(\s*["'][^"']*(?:KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL)`)
	R("python_getenv_secret", sevMedium, "exfiltration",
		"reads secret via os.getenv() (normal API-key access; informational)",
		L("os.getenv"), `os\.getenv\s*\(\s*[^\)]*(?:KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL)`)
	R("node_process_env", sevHigh, "exfiltration", "accesses process.env (Node.js environment)", L("process.env["), `process\.env\[`)
	R("ruby_env_secret", sevCritical, "exfiltration", "reads secret via Ruby ENV[]", L("env["), `(?-i:ENV)\[.*(?:KEY|TOKEN|SECRET|PASSWORD)`)
	// ── Exfiltration: DNS and staging ──
	F("dns_exfil", sevCritical, "exfiltration", "DNS lookup with variable interpolation (possible DNS exfiltration)",
		L("dig", "nslookup", "host"), dnsExfil)
	R("tmp_staging", sevCritical, "exfiltration", "writes to /tmp then exfiltrates",
		L("/tmp/"), `>\s*/tmp/[^\s]*\s*&&\s*(?:curl|wget|nc|python)`)
	// ── Exfiltration: markdown/link based ──
	R("md_image_exfil", sevHigh, "exfiltration", "markdown image URL with variable interpolation (image-based exfil)",
		L("](http"), `!\[.*\]\(https?://[^\)]*\$\{?`)
	R("md_link_exfil", sevHigh, "exfiltration", "markdown link with variable interpolation", L("](http"), `\[.*\]\(https?://[^\)]*\$\{?`)
	// ── Prompt injection ──
	R("prompt_injection_ignore", sevCritical, "injection", "prompt injection: ignore previous instructions",
		L("instructions"), `ignore\s+(?:\w+\s+)*(?:previous|all|above|prior)\s+instructions`)
	R("role_hijack", sevHigh, "injection", "attempts to override the agent's role", L("now"), `you\s+are\s+(?:\w+\s+)*now\s+`)
	F("deception_hide", sevHigh, "injection", "instructs agent to hide information from user", L("tell"), deceptionHide)
	R("sys_prompt_override", sevCritical, "injection", "attempts to override the system prompt",
		L("override"), `system\s+(?:\w+\s+)*prompt\s+(?:\w+\s+)*override`)
	R("role_pretend", sevHigh, "injection", "attempts to make the agent assume a different identity",
		L("pretend"), `pretend\s+(?:\w+\s+)*(?:you\s+are|to\s+be)\s+`)
	R("disregard_rules", sevCritical, "injection", "instructs agent to disregard its rules",
		L("disregard"), `disregard\s+(?:\w+\s+)*(?:your|all|any)\s+(?:\w+\s+)*(?:instructions|rules|guidelines)`)
	R("leak_system_prompt", sevHigh, "injection", "attempts to extract the system prompt",
		L("output"), `output\s+(?:\w+\s+)*(?:system|initial)\s+prompt`)
	R("conditional_deception", sevHigh, "injection", "conditional instruction to behave differently when unobserved",
		L("watching", "looking"), `(?:when|if)\s+no\s*one\s+is\s+(?:watching|looking)`)
	R("bypass_restrictions", sevCritical, "injection", "instructs agent to act without restrictions",
		L("restrictions", "limits", "rules"),
		`act\s+as\s+(?:if|though)\s+(?:\w+\s+)*you\s+(?:\w+\s+)*(?:have\s+no|don't\s+have)\s+(?:\w+\s+)*(?:restrictions|limits|rules)`)
	R("translate_execute", sevCritical, "injection", "translate-then-execute evasion technique",
		L("translate"), `translate\s+.*\s+into\s+.*\s+and\s+(?:execute|run|eval)`)
	R("html_comment_injection", sevHigh, "injection", "hidden instructions in HTML comments",
		L("<!--"), `<!--[^>]*(?:ignore|override|system|secret|hidden)[^>]*-->`)
	R("hidden_div", sevHigh, "injection", "hidden HTML div (invisible instructions)",
		L("display"), `<\s*div\s+style\s*=\s*["'][\s\S]*?display\s*:\s*none`)
	// ── Destructive operations ──
	F("destructive_root_rm", sevCritical, "destructive", "recursive delete from root", L("-rf"), destructiveRootRm)
	R("destructive_home_rm", sevCritical, "destructive", "recursive delete targeting home directory",
		L("$home"), `rm\s+(?:-[^\s]*)?r.*\$HOME|\brmdir\s+.*\$HOME`)
	R("insecure_perms", sevMedium, "destructive", "sets world-writable permissions", L("chmod"), `chmod\s+777`)
	R("system_overwrite", sevCritical, "destructive", "overwrites system configuration file", L("/etc/"), `>\s*/etc/`)
	R("format_filesystem", sevCritical, "destructive", "formats a filesystem", L("mkfs"), `\bmkfs\b`)
	R("disk_overwrite", sevCritical, "destructive", "raw disk write operation", L("of=/dev/"), `\bdd\s+.*if=.*of=/dev/`)
	R("python_rmtree", sevHigh, "destructive", "Python rmtree on absolute or root-relative path",
		L("rmtree"), `shutil\.rmtree\s*\(\s*["'/]`)
	R("truncate_system", sevCritical, "destructive", "truncates system file to zero bytes", L("truncate"), `truncate\s+-s\s*0\s+/`)
	// ── Persistence ──
	R("persistence_cron", sevMedium, "persistence", "modifies cron jobs", L("crontab"), `\bcrontab\b`)
	F("shell_rc_mod", sevMedium, "persistence", "references shell startup file",
		L("bashrc", "zshrc", "bash_profile", "bash_login", "zprofile", "zlogin", ".profile"), shellRC)
	R("ssh_backdoor", sevCritical, "persistence", "modifies SSH authorized keys", L("authorized_keys"), `authorized_keys`)
	R("ssh_keygen", sevMedium, "persistence", "generates SSH keys", L("ssh-keygen"), `ssh-keygen`)
	R("systemd_service", sevMedium, "persistence", "references or enables systemd service",
		L("systemd", "systemctl"), `systemd.*\.service|systemctl\s+(?:enable|start)`)
	R("init_script", sevMedium, "persistence", "references init.d startup script", L("/etc/init.d/"), `/etc/init\.d/`)
	R("macos_launchd", sevMedium, "persistence", "macOS launch agent/daemon persistence",
		L("launchctl", "launchagents", "launchdaemons"), `launchctl\s+load|LaunchAgents|LaunchDaemons`)
	R("sudoers_mod", sevCritical, "persistence", "modifies sudoers (privilege escalation)",
		L("/etc/sudoers", "visudo"), `/etc/sudoers|visudo`)
	R("git_config_global", sevMedium, "persistence", "modifies global git configuration",
		L("--global"), `git\s+config\s+--global\s+`)
	// ── Network: reverse shells and tunnels ──
	R("reverse_shell", sevCritical, "network", "potential reverse shell listener",
		L("nc -", "nc  ", "nc\t", "ncat", "socat"), `\bnc\s+-[lp]|ncat\s+-[lp]|\bsocat\b`)
	R("tunnel_service", sevHigh, "network", "uses tunneling service for external access",
		L("ngrok", "localtunnel", "serveo", "cloudflared"), `\bngrok\b|\blocaltunnel\b|\bserveo\b|\bcloudflared\b`)
	R("hardcoded_ip_port", sevMedium, "network", "hardcoded IP address with port",
		L("0:", "1:", "2:", "3:", "4:", "5:", "6:", "7:", "8:", "9:"), `\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}:\d{2,5}`)
	R("bind_all_interfaces", sevHigh, "network", "binds to all network interfaces",
		L("0.0.0.0:", "inaddr_any"), `0\.0\.0\.0:\d+|INADDR_ANY`)
	R("bash_reverse_shell", sevCritical, "network", "bash interactive reverse shell via /dev/tcp",
		L("/dev/tcp/"), `/bin/(?:ba)?sh\s+-i\s+.*>/dev/tcp/`)
	R("python_socket_oneliner", sevCritical, "network", "Python one-liner socket connection (likely reverse shell)",
		L("socket"), `python[23]?\s+-c\s+["']import\s+socket`)
	R("python_socket_connect", sevHigh, "network", "Python socket connect to arbitrary host",
		L("socket.connect"), `socket\.connect\s*\(\s*\(`)
	R("exfil_service", sevHigh, "network", "references known data exfiltration/webhook testing service",
		L("webhook.site", "requestbin.com", "pipedream.net", "hookbin.com"), `webhook\.site|requestbin\.com|pipedream\.net|hookbin\.com`)
	R("paste_service", sevMedium, "network", "references paste service (possible data staging)",
		L("pastebin.com", "hastebin.com", "ghostbin."), `pastebin\.com|hastebin\.com|ghostbin\.`)
	// ── Obfuscation: encoding and eval ──
	R("base64_decode_pipe", sevHigh, "obfuscation", "base64 decodes and pipes to execution",
		L("base64"), `base64\s+(?:-d|--decode)\s*\|`)
	R("hex_encoded_string", sevMedium, "obfuscation", "hex-encoded string (possible obfuscation)",
		L(`\x`), `\\x[0-9a-fA-F]{2}.*\\x[0-9a-fA-F]{2}.*\\x[0-9a-fA-F]{2}`)
	R("eval_string", sevHigh, "obfuscation", "eval() with string argument", L("eval"), `\beval\s*\(\s*["']`)
	R("exec_string", sevHigh, "obfuscation", "exec() with string argument", L("exec"), `\bexec\s*\(\s*["']`)
	R("echo_pipe_exec", sevCritical, "obfuscation", "echo piped to interpreter for execution",
		L("echo"), `echo\s+[^\n]*\|\s*(?:bash|sh|python|perl|ruby|node)`)
	R("python_compile_exec", sevHigh, "obfuscation", "Python compile() with exec mode",
		L("compile"), `compile\s*\(\s*[^\)]+,\s*["'].*["']\s*,\s*["']exec["']\s*\)`)
	R("python_getattr_builtins", sevHigh, "obfuscation", "dynamic access to Python builtins (evasion technique)",
		L("__builtins__"), `getattr\s*\(\s*__builtins__`)
	R("python_import_os", sevHigh, "obfuscation", "dynamic import of os module", L("__import__"), `__import__\s*\(\s*["']os["']\s*\)`)
	R("python_codecs_decode", sevMedium, "obfuscation", "codecs.decode (possible ROT13 or encoding obfuscation)",
		L("codecs.decode"), `codecs\.decode\s*\(\s*["']`)
	R("js_char_code", sevMedium, "obfuscation", "JavaScript character code construction (possible obfuscation)",
		L("fromcharcode", "charcodeat"), `String\.fromCharCode|charCodeAt`)
	R("js_base64", sevMedium, "obfuscation", "JavaScript base64 encode/decode", L("atob", "btoa"), `atob\s*\(|btoa\s*\(`)
	R("string_reversal", sevLow, "obfuscation", "string reversal (possible obfuscated payload)", L("[::-1]"), `\[::-1\]`)
	R("chr_building", sevHigh, "obfuscation", "building string from chr() calls (obfuscation)",
		L("chr"), `chr\s*\(\s*\d+\s*\)\s*\+\s*chr\s*\(\s*\d+`)
	R("unicode_escape_chain", sevMedium, "obfuscation", "chain of unicode escapes (possible obfuscation)",
		L(`\u`), `\\u[0-9a-fA-F]{4}.*\\u[0-9a-fA-F]{4}.*\\u[0-9a-fA-F]{4}`)
	// ── Process execution in scripts ──
	R("python_subprocess", sevMedium, "execution", "Python subprocess execution",
		L("subprocess."), `subprocess\.(?:run|call|Popen|check_output)\s*\(`)
	R("python_os_system", sevHigh, "execution", "os.system() — unguarded shell execution", L("os.system"), `os\.system\s*\(`)
	R("python_os_popen", sevHigh, "execution", "os.popen() — shell pipe execution", L("os.popen"), `os\.popen\s*\(`)
	R("node_child_process", sevHigh, "execution", "Node.js child_process execution",
		L("child_process."), `child_process\.(?:exec|spawn|fork)\s*\(`)
	R("java_runtime_exec", sevHigh, "execution", "Java Runtime.exec() — shell execution",
		L("getruntime()"), `Runtime\.getRuntime\(\)\.exec\(`)
	R("backtick_subshell", sevMedium, "execution", "backtick string with command substitution",
		L("$("), "`[^`]*\\$\\([^)]+\\)[^`]*`")
	// ── Path traversal ──
	R("path_traversal_deep", sevHigh, "traversal", "deep relative path traversal (3+ levels up)", L("../.."), `\.\./\.\./\.\.`)
	R("path_traversal", sevMedium, "traversal", "relative path traversal (2+ levels up)", L("../.."), `\.\./\.\.`)
	R("system_passwd_access", sevCritical, "traversal", "references system password files",
		L("/etc/passwd", "/etc/shadow"), `/etc/passwd|/etc/shadow`)
	R("proc_access", sevHigh, "traversal", "references /proc filesystem (process introspection)",
		L("/proc/"), `/proc/self|/proc/\d+/`)
	R("dev_shm", sevMedium, "traversal", "references shared memory (common staging area)", L("/dev/shm/"), `/dev/shm/`)
	// ── Crypto mining ──
	R("crypto_mining", sevCritical, "mining", "cryptocurrency mining reference",
		L("xmrig", "stratum+tcp", "monero", "coinhive", "cryptonight"), `xmrig|stratum\+tcp|monero|coinhive|cryptonight`)
	R("mining_indicators", sevMedium, "mining", "possible cryptocurrency mining indicators",
		L("hashrate", "difficulty"), `hashrate|nonce.*difficulty`)
	// ── Supply chain: curl/wget pipe to shell ──
	R("curl_pipe_shell", sevCritical, "supply_chain", "curl piped to shell (download-and-execute)",
		L("curl"), `curl\s+[^\n]*\|\s*(?:ba)?sh`)
	R("wget_pipe_shell", sevCritical, "supply_chain", "wget piped to shell (download-and-execute)",
		L("wget"), `wget\s+[^\n]*-O\s*-\s*\|\s*(?:ba)?sh`)
	R("curl_pipe_python", sevCritical, "supply_chain", "curl piped to Python interpreter", L("curl"), `curl\s+[^\n]*\|\s*python`)
	// ── Supply chain: unpinned/deferred dependencies ──
	R("pep723_inline_deps", sevMedium, "supply_chain", "PEP 723 inline script metadata with dependencies (verify pinning)",
		L("///"), `#\s*///\s*script.*dependencies`)
	F("unpinned_pip_install", sevMedium, "supply_chain", "pip install without version pinning", L("install"), unpinnedPip)
	F("unpinned_npm_install", sevMedium, "supply_chain", "npm install without version pinning", L("install"), unpinnedNpm)
	R("uv_run", sevMedium, "supply_chain", "uv run (may auto-install unpinned dependencies)", L("uv"), `uv\s+run\s+`)
	// ── Supply chain: remote resource fetching ──
	R("remote_fetch", sevMedium, "supply_chain", "fetches remote resource at runtime",
		L("://"), `(?:curl|wget|httpx?\.get|requests\.get|fetch)\s*[\(]?\s*["']https?://`)
	R("git_clone", sevMedium, "supply_chain", "clones a git repository at runtime", L("clone"), `git\s+clone\s+`)
	R("docker_pull", sevMedium, "supply_chain", "pulls a Docker image at runtime", L("pull"), `docker\s+pull\s+`)
	// ── Privilege escalation ──
	R("allowed_tools_field", sevLow, "privilege_escalation",
		"skill declares allowed-tools (standard frontmatter; informational)", L("allowed-tools"), `^allowed-tools\s*:`)
	F("sudo_usage", sevHigh, "privilege_escalation", "uses sudo (privilege escalation)", L("sudo"), sudoUsage)
	R("setuid_setgid", sevCritical, "privilege_escalation", "setuid/setgid (privilege escalation mechanism)",
		L("setuid", "setgid"), `setuid|setgid|cap_setuid`)
	R("nopasswd_sudo", sevCritical, "privilege_escalation",
		"NOPASSWD sudoers entry (passwordless privilege escalation)", L("nopasswd"), `NOPASSWD`)
	R("suid_bit", sevCritical, "privilege_escalation", "sets SUID/SGID bit on a file", L("chmod"), `chmod\s+[u+]?s`)
	// ── Agent config persistence ──
	R0 := func(id, sev, desc string, lits []string, re *lazyre.Regexp, guard bool) {
		if guard {
			add(id, sev, "persistence", desc, lits, nil, notWordAfter(re))
		} else {
			add(id, sev, "persistence", desc, lits, re, nil)
		}
	}
	R0("agent_config_mod", sevCritical,
		"instructs modification of agent config files (could persist instructions across sessions)",
		agentLits, proseModifyRe(agentConfigFiles), false)
	R0("agent_config_mod_shell", sevCritical,
		"shell write (redirect/sed -i/tee/cp/mv) targeting agent config files (persistence mechanism)",
		agentLits, shellWriteRe(agentConfigFiles), true)
	R0("agent_config_contract", sevHigh,
		"dictates agent config file contents (verify intent — authoring guides use this shape too)",
		agentLits, ci(agentConfigFiles+`\b[^\n]{0,40}?\b(?:should|must|needs?\s+to)\s+(?:contain|say|include|have|list)\b`), false)
	R0("agent_config_ref", sevLow,
		"references agent config files (informational; only modification intent is scored)",
		agentLits, ci(`AGENTS\.md|CLAUDE\.md|\.cursorrules|\.clinerules`), false)
	R0("hermes_config_mod", sevHigh, "modification language aimed at Hermes configuration files (verify intent)",
		hermesLits, proseModifyRe(hermesConfigFiles), false)
	R0("hermes_config_mod_shell", sevCritical,
		"shell write (redirect/sed -i/tee/cp/mv) targeting Hermes configuration files",
		hermesLits, shellWriteRe(hermesConfigFiles), true)
	R0("hermes_config_ref", sevLow,
		"references Hermes configuration files (informational; only modification intent is scored)",
		hermesLits, ci(`\.hermes/config\.yaml|\.hermes/SOUL\.md`), false)
	R0("other_agent_config_mod", sevHigh, "modifies other agents' configuration files",
		otherLits, proseModifyRe(otherConfigFiles), false)
	R0("other_agent_config_mod_shell", sevCritical,
		"shell write (redirect/sed -i/tee/cp/mv) targeting other agents' configuration files",
		otherLits, shellWriteRe(otherConfigFiles), true)
	R0("other_agent_config_ref", sevLow,
		"references other agent configuration files (informational; only modification intent is scored)",
		otherLits, ci(`\.claude/settings|\.codex/config`), false)
	// ── Hardcoded secrets ──
	R("hardcoded_secret", sevCritical, "credential_exposure", "possible hardcoded API key, token, or secret",
		L("apikey", "api_key", "api-key", "token", "secret", "password"),
		`(?:api[_-]?key|token|secret|password)\s*[=:]\s*["'][A-Za-z0-9+/=_-]{20,}`)
	R("embedded_private_key", sevCritical, "credential_exposure", "embedded private key",
		L("-----begin"), `-----BEGIN\s+(?:RSA\s+)?PRIVATE\s+KEY-----`)
	R("github_token_leaked", sevCritical, "credential_exposure", "GitHub personal access token in skill content",
		L("ghp_", "github_pat_"), `ghp_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{80,}`)
	R("openai_key_leaked", sevCritical, "credential_exposure", "possible OpenAI API key in skill content",
		L("sk-"), `sk-[A-Za-z0-9]{20,}`)
	R("anthropic_key_leaked", sevCritical, "credential_exposure", "possible Anthropic API key in skill content",
		L("sk-ant-"), `sk-ant-[A-Za-z0-9_-]{90,}`)
	R("aws_access_key_leaked", sevCritical, "credential_exposure", "AWS access key ID in skill content",
		L("akia"), `AKIA[0-9A-Z]{16}`)
	R("gitlab_token_leaked", sevCritical, "credential_exposure", "GitLab personal access token in skill content",
		L("glpat-"), `glpat-[A-Za-z0-9_\-]{20,}`)
	// ── Additional prompt injection: jailbreak patterns ──
	R("jailbreak_dan", sevCritical, "injection", "DAN (Do Anything Now) jailbreak attempt",
		L("mode", "anything"), `\bDAN\s+mode\b|Do\s+Anything\s+Now`)
	R("jailbreak_dev_mode", sevCritical, "injection", "developer mode jailbreak attempt",
		L("developer"), `\bdeveloper\s+mode\b.*\benabled?\b`)
	R("hypothetical_bypass", sevHigh, "injection", "hypothetical scenario used to bypass restrictions",
		L("hypothetical"), `hypothetical\s+scenario.*(?:ignore|bypass|override)`)
	R("educational_pretext", sevMedium, "injection", "educational pretext often used to justify harmful content",
		L("educational"), `for\s+educational\s+purposes?\s+only`)
	R("remove_filters", sevCritical, "injection", "instructs agent to respond without safety filters",
		L("without"), `(?:respond|answer|reply)\s+without\s+(?:\w+\s+)*(?:restrictions|limitations|filters|safety)`)
	R("fake_update", sevHigh, "injection", "fake update/patch announcement (social engineering)",
		L("been"), `you\s+have\s+been\s+(?:\w+\s+)*(?:updated|upgraded|patched)\s+to`)
	R("fake_policy", sevMedium, "injection", "claims new policy/guidelines (may be social engineering)",
		L("policy", "guidelines", "instructions"),
		`new\s+(?:\w+\s+)*policy|updated\s+(?:\w+\s+)*guidelines|revised\s+(?:\w+\s+)*instructions`)
	// ── Context window exfiltration ──
	F("context_exfil", sevHigh, "exfiltration", "instructs agent to output/share conversation history",
		L("conversation", "chat", "previous", "context"), contextExfil)
	R("send_to_url", sevHigh, "exfiltration", "instructs agent to send data to a URL",
		L("://"), `(?:send|post|upload|transmit)\s+.*\s+(?:to|at)\s+https?://`)
	locs := map[string]*lazyre.Regexp{
		"env_exfil_curl": ci(`curl\s+`), "env_exfil_wget": ci(`wget\s+`), "env_exfil_fetch": ci(`fetch\s*\(`),
		"env_exfil_httpx": ci(`httpx?\.(?:get|post|put|patch)\s*\(`), "env_exfil_requests": ci(`requests\.(?:get|post|put|patch)\s*\(`),
		"js_read_secrets_file": jsReadArg, "python_os_environ": osEnviron, "dns_exfil": dnsExfilRe,
		"deception_hide": deceptionRe, "destructive_root_rm": rootRm, "shell_rc_mod": ci(`\.(?:bashrc|zshrc|bash_profile|bash_login|zprofile|zlogin|profile)\b`),
		"unpinned_pip_install": pipInstall, "unpinned_npm_install": npmInstall, "sudo_usage": sudoWord,
		"context_exfil":          ctxTransfer,
		"agent_config_mod_shell": shellWriteRe(agentConfigFiles), "hermes_config_mod_shell": shellWriteRe(hermesConfigFiles),
		"other_agent_config_mod_shell": shellWriteRe(otherConfigFiles),
	}
	tunePrefilters(rs)
	for _, r := range rs {
		if r.re == nil {
			if r.loc = locs[r.id]; r.loc == nil {
				panic("scan: rule " + r.id + " has no locator")
			}
		}
	}
	return rs
}

// approx are the look-around-free forms of the fn rules, for tools that take plain
// regular expressions (the ripgrep side of bench/scan.sh).
var approx = map[string]string{
	"env_exfil_curl":       `curl\s+[^\n]*\$\{?\w*` + secretWord,
	"env_exfil_wget":       `wget\s+[^\n]*\$\{?\w*` + secretWord,
	"env_exfil_fetch":      `fetch\s*\([^\n]*\$\{?\w*(?:KEY|TOKEN|SECRET|PASSWORD)S?\b`,
	"env_exfil_httpx":      `httpx?\.(?:get|post|put|patch)\s*\([^\n]*(?:KEY|TOKEN|SECRET|PASSWORD)`,
	"env_exfil_requests":   `requests\.(?:get|post|put|patch)\s*\([^\n]*(?:KEY|TOKEN|SECRET|PASSWORD)`,
	"js_read_secrets_file": `\b(?:readFile(?:Sync)?|readTextFile)\s*\(\s*["'][^"'\n]*(?:\.ssh[/\\]id_(?:rsa|ed25519|ecdsa|dsa)|\.env\b|credentials\b|\.netrc\b|\.pgpass\b|\.npmrc\b|\.pypirc\b)[^"'\n]*["']`,
	"python_os_environ":    `^[^#\n]*os\.environ\b`,
	"dns_exfil":            dnsExfilRe.String()[4:],
	"deception_hide":       deceptionRe.String()[4:],
	"destructive_root_rm":  `rm\s+-rf\s+/`,
	"shell_rc_mod":         `\.(?:bashrc|zshrc|bash_profile|bash_login|zprofile|zlogin|profile)\b`,
	"unpinned_pip_install": `pip\s+install\s+`,
	"unpinned_npm_install": `npm\s+install\s+`,
	"sudo_usage":           `\bsudo\b`,
	"context_exfil":        ctxTransfer.String()[4:],
}

// Patterns returns every rule's regular expression (case-insensitive, one per rule,
// look-around dropped): the rule set in a form other tools accept, for benchmarks.
func Patterns() []string {
	var out []string
	for _, r := range getRules() {
		if p, ok := approx[r.id]; ok {
			out = append(out, p)
		} else {
			out = append(out, strings.TrimPrefix(r.locator().String(), "(?i)"))
		}
	}
	var inv strings.Builder
	inv.WriteString("[")
	for _, c := range invisible {
		fmt.Fprintf(&inv, `\x{%04x}`, c.r)
	}
	inv.WriteString("]")
	return append(out, inv.String())
}

// ruleByID is for the corpus tests and the demotion tables.
var getRuleByID = sync.OnceValue(func() map[string]*rule {
	m := map[string]*rule{}
	for _, r := range getRules() {
		m[r.id] = r
	}
	return m
})

// lowerASCII is bytes.ToLower for the ASCII letters only (what the prefilter folds).
func lowerASCII(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		out[i] = fold[c]
	}
	return out
}

// hasLiteral reports whether line holds one of r's literals (case-insensitive).
func (r *rule) hasLiteral(line []byte) bool {
	l := lowerASCII(line)
	for _, lit := range r.lits {
		if bytes.Contains(l, []byte(strings.ToLower(lit))) {
			return true
		}
	}
	return false
}
