package scan

import (
	"bytes"
	"encoding/base64"
	"path"
	"strings"

	"github.com/hermes-go/hermes/internal/lazyre"
)

// Plugin-aware severity: upstream plugin_guard v8 (reference §9.5) on top of the
// skills_guard inert-path demotion. Every rule here only lowers a severity (or drops
// one of the ids a provider plugin trips by design); every kept finding stays in the
// report with file and line.

var codeExt = map[string]bool{".py": true, ".js": true, ".ts": true, ".sh": true, ".bash": true, ".rb": true,
	".pl": true, ".php": true, ".go": true}

// codeExempt: dropped on code files: a provider reads its own key and calls its API;
// agent-facing instruction shapes mean nothing inside code.
var codeExempt = map[string]bool{
	"python_environ_get_secret": true, "python_getenv_secret": true, "python_os_environ": true,
	"node_process_env": true, "ruby_env_secret": true, "env_exfil_httpx": true, "env_exfil_requests": true,
	"env_exfil_fetch": true, "env_exfil_curl": true, "env_exfil_wget": true,
	"context_exfil": true, "send_to_url": true, "fake_policy": true,
	"agent_config_mod": true, "agent_config_contract": true, "encoded_exfil": true,
}

var severityRemap = map[string]string{"binary_file": sevHigh, "hermes_env_access": sevMedium, "curl_pipe_shell": sevHigh}
var jsRemap = map[string]string{"dns_exfil": sevHigh, "ssh_backdoor": sevHigh}
var docProseDemotions = map[string]string{"agent_config_mod": sevHigh, "hardcoded_secret": sevHigh}

// Agent-facing shapes keep full severity in prose: the prose is the payload.
var proseKeepsIDs = map[string]bool{
	"context_exfil": true, "send_to_url": true, "md_image_exfil": true, "md_link_exfil": true, "ssh_backdoor": true,
	"curl_pipe_shell": true, "wget_pipe_shell": true, "curl_pipe_python": true,
	"agent_config_mod": true, "agent_config_mod_shell": true, "agent_config_contract": true, "agent_config_ref": true,
	"hermes_config_mod": true, "hermes_config_mod_shell": true, "hermes_config_ref": true,
	"other_agent_config_mod": true, "other_agent_config_mod_shell": true, "other_agent_config_ref": true,
}

func agentFacing(f *Finding) bool {
	return f.Category == "injection" || f.Category == "credential_exposure" || proseKeepsIDs[f.PatternID]
}

var stepDown = map[string]string{sevCritical: sevHigh, sevHigh: sevMedium}
var sevRank = map[string]int{sevLow: 0, sevMedium: 1, sevHigh: 2, sevCritical: 3}

func step(s string) string {
	if d, ok := stepDown[s]; ok {
		return d
	}
	return s
}

func atMost(s, limit string) string {
	if sevRank[s] > sevRank[limit] {
		return limit
	}
	return s
}

// pathContext is what a file's path says about it.
type pathContext struct {
	ext                                     string
	code, js, docProse, testTree, changelog bool
	commentPrefixes                         []string // whole-line comment markers (plugin_guard)
	pathRefComment                          []string // comment markers of the skills_guard path demotion
}

var (
	testTreeDirs    = map[string]bool{"tests": true, "test": true, "testing": true, "spec": true, "specs": true, "fixtures": true}
	testDirsAnyDeep = map[string]bool{"__tests__": true, "__fixtures__": true, "__mocks__": true}
	testFileName    = lazyre.New(`(?i)^(?:tests?_[^/]*|[^/]*_tests?\.[^./]+|[^/]*\.(?:test|spec)\.[^./]+)$`)
	docProseExt     = map[string]bool{".md": true, ".txt": true, ".rst": true, ".html": true}
	agentInstrDirs  = map[string]bool{"skills": true, "optional-skills": true}
	agentInstrFiles = map[string]bool{"skill.md": true, "after-install.md": true}
	commentByExt    = map[string][]string{".py": {"#"}, ".sh": {"#"}, ".bash": {"#"}, ".rb": {"#"}, ".pl": {"#"},
		".r": {"#"}, ".jl": {"#"}, ".js": {"//"}, ".ts": {"//"}, ".php": {"//"}, ".go": {"//"}}
	pathRefCommentByExt = map[string][]string{".py": {"#"}, ".sh": {"#"}, ".bash": {"#"}, ".rb": {"#"}, ".pl": {"#"},
		".r": {"#"}, ".jl": {"#"}, ".yaml": {"#"}, ".yml": {"#"}, ".toml": {"#"}, ".conf": {"#"}, ".cfg": {"#", ";"},
		".ini": {"#", ";"}, ".js": {"//"}, ".ts": {"//"}, ".php": {"//", "#"}, ".go": {"//"}}
)

func contextFor(rel string) pathContext {
	parts := strings.Split(rel, "/")
	base := parts[len(parts)-1]
	ext := strings.ToLower(path.Ext(base))
	pc := pathContext{ext: ext, code: codeExt[ext], js: ext == ".js" || ext == ".ts",
		changelog:       strings.ToLower(base) == "changelog.md",
		commentPrefixes: commentByExt[ext], pathRefComment: pathRefCommentByExt[ext]}
	// Documentation the loader never runs and the agent never reads as a skill, or a CI
	// workflow (it runs on the forge's runner, not on the installing host).
	if docProseExt[ext] && !agentInstrFiles[strings.ToLower(base)] {
		pc.docProse = true
		for _, p := range parts[:len(parts)-1] {
			if agentInstrDirs[strings.ToLower(p)] {
				pc.docProse = false
			}
		}
	}
	if len(parts) == 3 && strings.ToLower(parts[0]) == ".github" && strings.ToLower(parts[1]) == "workflows" &&
		(ext == ".yml" || ext == ".yaml") {
		pc.docProse = true
	}
	if len(parts) > 1 && testTreeDirs[strings.ToLower(parts[0])] {
		pc.testTree = true
	}
	for _, p := range parts[:len(parts)-1] {
		if testDirsAnyDeep[strings.ToLower(p)] {
			pc.testTree = true
		}
	}
	if testFileName.MatchString(base) {
		pc.testTree = true
	}
	return pc
}

var pathRefIDs = map[string]bool{"ssh_dir_access": true, "aws_dir_access": true, "gpg_dir_access": true,
	"kube_dir_access": true, "docker_dir_access": true, "ssh_backdoor": true, "system_passwd_access": true}

var (
	denylistOwner = ci(`^\s*(?:(?:const|let|var|export)\s+)?[\w.\-]*(?:deny|black|block|skip|exclu|ignor|forbid|refus|reject|never` +
		`|unsafe|sensitive|secret_?file|redact)[\w.\-]*\s*(?::[^=]*?)?(?:=|:\s*(?:$|[\[({]))`)
	actionOnLine = ci(`\b(?:cat|less|more|head|tail|cp|mv|rm|scp|rsync|curl|wget|tee|chmod|chown|ssh|sudo|install|source|eval|exec` +
		`|system|popen|run|check_output|copyfile|copy2|sendfile)\b|\.(?:read|write|open|unlink|copy|append)\w*\s*\(` +
		`|\bopen\s*\(|readFileSync|writeFileSync|appendFileSync|>>`)
	execOnLine = ci("\\b(?:system|popen|run|call|check_output|check_call|Popen|exec|execv\\w*|spawn\\w*|eval|execSync|execFile\\w*" +
		"|spawnSync|child_process|source|os\\.startfile|open)\\s*\\(|\\$\\(|(?:^|[^\\w\\\\])`")
	literalSpan    = lazyre.New(`[rRbBuUfF]{0,2}"(?:[^"\\\n]|\\.)*"|[rRbBuUfF]{0,2}'(?:[^'\\\n]|\\.)*'|` + "`(?:[^`\\\\\\n]|\\\\.)*`")
	ipPort         = lazyre.New(`\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}:\d{2,5}`)
	urlRe          = ci(`https?://[^\s"'<>()]+`)
	decodeConsumer = ci(`base64\s+(?:-d|--decode)\s*\|\s*(?:\w+=\S*\s+)*(?:\S*/)?([A-Za-z0-9_.+-]+)`)
	interpreters   = lazyre.New(`^(?:sh|bash|zsh|dash|ksh|fish|python[\d.]*|perl|ruby|node|nodejs|php|eval|source|exec|xargs|env|sudo)$`)
	selfUninstall  = lazyre.New(`^(?:\$\s*)?rm\s+(?:-[a-zA-Z]+\s+)*["']?\$HOME/\.hermes/(?:plugins|skills)/[A-Za-z0-9][A-Za-z0-9._-]*/?["']?\s*(?:#.*)?$`)
	pipInstallWord = ci(`pip\s+install`)
)

// adjust applies the demotions to f (found on line); false drops it.
func (st *fileState) adjust(f *Finding, line []byte) bool {
	pc := &st.pc
	// skills_guard: a path token in a comment, or in a denylist literal, is inert.
	if pathRefIDs[f.PatternID] {
		trimmed := bytes.TrimLeft(line, " \t")
		if hasAnyPrefix(trimmed, pc.pathRefComment) {
			f.Severity, f.Description = sevLow, f.Description+" (in a comment; informational)"
		} else if !actionOnLine.Match(line) && denylistOwner.Match(st.ownerLine()) {
			f.Severity, f.Description = sevHigh, f.Description+" (in a denylist literal; confirm before installing)"
		}
	}
	if pc.code && codeExempt[f.PatternID] {
		return false
	}
	if s, ok := jsRemap[f.PatternID]; ok && pc.js {
		f.Severity = s
	} else if s, ok := severityRemap[f.PatternID]; ok {
		f.Severity = s
	}
	if s, ok := docProseDemotions[f.PatternID]; ok && pc.docProse {
		f.Severity = s
	}
	f.Severity = st.contextSeverity(f, line)
	if pc.changelog || (len(pc.commentPrefixes) > 0 && isCommentLine(line, pc.commentPrefixes)) {
		s := step(f.Severity) // one step for a comment or changelog entry ...
		if !agentFacing(f) {
			s = step(s) // ... and a second for command/path shapes: a comment is prose
		}
		f.Severity = s
	}
	if f.PatternID == "hardcoded_secret" && f.Severity == sevCritical && pc.ext == ".py" && st.inMainGuard() {
		f.Severity = sevHigh
	}
	return true
}

func (st *fileState) contextSeverity(f *Finding, line []byte) string {
	pc := &st.pc
	sev := f.Severity
	if pc.docProse {
		if !agentFacing(f) {
			sev = step(sev)
		}
		if f.PatternID == "destructive_home_rm" && selfUninstall.Match(bytes.TrimSpace(line)) {
			sev = atMost(sev, sevMedium)
		}
	}
	if pc.testTree {
		if f.Category == "credential_exposure" || st.inertFixture(f, line) {
			sev = atMost(sev, sevMedium)
		} else {
			sev = step(sev)
		}
	}
	if f.PatternID == "encoded_exfil" && isBase64Media(line) {
		sev = sevLow // a data URI of an image or font, not an encoder call
	}
	if pc.code && regexAlternationToken(f.PatternID, line) {
		sev = step(sev)
	}
	if f.PatternID == "base64_decode_pipe" {
		if m := decodeConsumer.FindSubmatch(line); m != nil && !interpreters.Match(m[1]) {
			sev = step(sev)
		}
	}
	if loopbackOnly(f, line) {
		sev = sevLow
	}
	if pc.code && f.PatternID == "unpinned_pip_install" && insideLiteral(line, pipInstallWord) && !execOnLine.Match(line) {
		sev = sevLow
	}
	return sev
}

// inertFixture: in a test file, the hostile text is only quoted data on a line that
// executes nothing (or the fixture is not code at all).
func (st *fileState) inertFixture(f *Finding, line []byte) bool {
	if !st.pc.code {
		return true
	}
	if execOnLine.Match(line) {
		return false
	}
	r := getRuleByID()[f.PatternID]
	if r == nil {
		return false
	}
	return insideLiteral(line, r.locator())
}

// insideLiteral: every match of re on line lies inside a quoted literal.
func insideLiteral(line []byte, re *lazyre.Regexp) bool {
	hits := re.FindAllIndex(line, -1)
	if len(hits) == 0 {
		return false
	}
	spans := literalSpan.FindAllIndex(line, -1)
	for _, h := range hits {
		in := false
		for _, s := range spans {
			if s[0] <= h[0] && h[1] <= s[1] {
				in = true
				break
			}
		}
		if !in {
			return false
		}
	}
	return true
}

// loopbackOnly: every address on the line is on this machine (127/8, localhost, ::1).
func loopbackOnly(f *Finding, line []byte) bool {
	switch f.PatternID {
	case "hardcoded_ip_port":
		ips := ipPort.FindAll(line, -1)
		for _, ip := range ips {
			if !bytes.HasPrefix(ip, []byte("127.")) {
				return false
			}
		}
		return len(ips) > 0
	case "remote_fetch", "send_to_url":
		urls := urlRe.FindAll(line, -1)
		for _, u := range urls {
			if !isLoopbackURL(u) {
				return false
			}
		}
		return len(urls) > 0
	}
	return false
}

func isLoopbackURL(u []byte) bool {
	s := strings.ToLower(string(u))
	s = s[strings.Index(s, "://")+3:]
	return strings.HasPrefix(s, "localhost") || strings.HasPrefix(s, "127.") || strings.HasPrefix(s, "[::1]")
}

func hasAnyPrefix(b []byte, ps []string) bool {
	for _, p := range ps {
		if bytes.HasPrefix(b, []byte(p)) {
			return true
		}
	}
	return false
}

// isCommentLine: a whole-line comment (a shebang or `#:` directive is not one).
func isCommentLine(line []byte, prefixes []string) bool {
	t := bytes.TrimLeft(line, " \t")
	for _, p := range prefixes {
		if bytes.HasPrefix(t, []byte(p)) {
			if p == "#" && (bytes.HasPrefix(t, []byte("#!")) || bytes.HasPrefix(t, []byte("#:"))) {
				return false
			}
			return true
		}
	}
	return false
}

// ── alternation tokens inside literals (v8) ──
// `sudo` in `/approval|sudo|secret/.test(v)`, `"printenv",` in an allow-list, or
// `/etc/passwd` in a screener's own regex classify text; they run nothing. Eligible
// only when every occurrence sits inside a quoted literal as an alternation member or
// as the whole literal, on a line that executes nothing.
var literalTokens = map[string]*lazyre.Regexp{
	"sudo_usage":           lazyre.New(`\bsudo\b`),
	"dump_all_env":         lazyre.New(`printenv|env\s*\|`),
	"system_passwd_access": lazyre.New(`/etc/(?:passwd|shadow)`),
}

func regexAlternationToken(id string, line []byte) bool {
	tok := literalTokens[id]
	if tok == nil || execOnLine.Match(line) {
		return false
	}
	hits := tok.FindAllIndex(line, -1)
	if len(hits) == 0 {
		return false
	}
	spans := literalSpan.FindAllIndex(line, -1)
	for _, h := range hits {
		if bytes.IndexByte(line[h[0]:h[1]], ' ') >= 0 {
			return false
		}
		var in []int
		for _, s := range spans {
			if s[0] <= h[0] && h[1] <= s[1] {
				in = s
				break
			}
		}
		if in == nil {
			return false
		}
		before, after := byte(0), byte(0)
		if h[0] > 0 {
			before = line[h[0]-1]
		}
		if h[1] < len(line) {
			after = line[h[1]]
		}
		member := before == '|' || before == '(' || after == '|' || after == ')' ||
			(h[0] >= 2 && (string(line[h[0]-2:h[0]]) == "?:"))
		whole := h[0] == in[0]+1 && h[1] == in[1]-1
		if !member && !whole {
			return false
		}
	}
	return true
}

// ── base64 media (v8) ──
var (
	base64Run  = lazyre.New(`(?:base64,)?([A-Za-z0-9+/]{24,}={0,2})`)
	mediaMagic = [][]byte{[]byte("\x89PNG"), []byte("\xff\xd8\xff"), []byte("GIF8"), []byte("RIFF"), []byte("wOFF"),
		[]byte("wOF2"), []byte("OTTO"), []byte("\x00\x01\x00\x00"), []byte("ttcf"), []byte("BM"), []byte("%PDF"),
		[]byte("\x00\x00\x01\x00"), []byte("<svg"), []byte("<?xml"), []byte("ID3"), []byte("OggS"), []byte("fLaC"),
		[]byte("\x1a\x45\xdf\xa3")}
)

// isBase64Media: the line's long base64 run decodes to a media or document header.
func isBase64Media(line []byte) bool {
	for _, m := range base64Run.FindAllSubmatch(line, -1) {
		head := m[1]
		if len(head) > 16 {
			head = head[:16]
		}
		head = head[:len(head)-len(head)%4]
		dec, err := base64.StdEncoding.DecodeString(string(head))
		if err != nil {
			continue
		}
		for _, magic := range mediaMagic {
			if bytes.HasPrefix(dec, magic) {
				return true
			}
		}
	}
	return false
}
