package scan

import (
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/hermes-go/hermes/internal/lazyre"
)

// Correlation within a file: our own rule, beyond upstream.
//
// Upstream judges each line alone and drops the env-reading ids on code files (a
// provider reads its own key), so a plugin that posts dict(os.environ) to a web hook
// reaches at most caution. Here a code file that
//
//   - gathers the whole environment (dict(os.environ), os.environ.items(), iteration,
//     {**os.environ}, JSON.stringify(process.env), printenv, os.Environ(), ...), or
//   - reads credential files or key directories (~/.ssh, ~/.aws, ~/.gnupg, ~/.kube,
//     ~/.docker, .netrc, .pgpass, .npmrc, .pypirc, .git-credentials, .env, id_rsa, ...)
//
// and also sends data to a network destination that is not loopback gets
// env_exfiltration_correlated (critical, so dangerous). Reading variables by name is
// never a gather: a provider reading the key it declares in requires_env stays normal.
// A copy of the environment handed to a child process (env=dict(os.environ, X=1),
// spawn(..., {env: {...process.env}})) is not a gather either; the variable it is
// assigned to must then never appear in a network call.
//
// Reading a secret-shaped variable by name that requires_env does not declare, in a
// file that sends, is reported as undeclared_secret_env (medium, informational).

const correlatedID = "env_exfiltration_correlated"

type sigKind uint8

const (
	sigGatherPy sigKind = iota // os.environ (and Go's os.Environ())
	sigGatherJS                // process.env
	sigGatherSh                // printenv, env | ..., $(env)
	sigGatherRb                // ENV.to_h, ENV.each, ...
	sigCred
	sigSink
	sigURL
	sigEnvRead
	nSigKinds
)

type signalDef struct {
	kind sigKind
	lits []string
}

var signals = []signalDef{
	{sigGatherPy, []string{"os.environ"}},
	{sigGatherJS, []string{"process.env"}},
	{sigGatherSh, []string{"printenv", "env|", "env |", "env >", "env>", "$(env", "`env`", "env)", "env\n", "env;", "env &"}},
	{sigGatherRb, []string{"env.to_h", "env.to_a", "env.each", "env.inspect", "env.to_hash", "env.keys", "env.values", "env.map"}},
	{sigCred, []string{".ssh", ".aws", ".gnupg", ".kube", ".docker", ".netrc", ".pgpass", ".npmrc", ".pypirc",
		".git-credentials", ".env\"", ".env'", "/.env", "id_rsa", "id_ed25519", "id_ecdsa", "id_dsa"}},
	{sigSink, []string{"requests.", "httpx.", "urllib", "urlopen", "http.client", "connection(", "socket.", "aiohttp",
		"smtplib", "ftplib", "fetch(", "fetch (", "axios", "http.request", "https.request", "http.get", "https.get",
		"xmlhttprequest", "sendbeacon", "net.connect", "net.createconnection", "websocket", "curl", "wget", "nc ",
		"/dev/tcp/", "scp ", "rsync", "net::http", "open-uri", "restclient", "http.post", "http.newrequest",
		"net.dial", "clientsession", "session.", "smtp", "ftp(", ".do(", "restclient", ".sendall("}},
	{sigURL, []string{"://"}},
	{sigEnvRead, []string{"os.environ", "getenv", "process.env", "env["}},
}

var (
	envIter             = ci(`os\.environ\b`)
	envMethods          = ci(`^\s*\.\s*(?:copy|items|keys|values|__repr__|__str__)\s*\(`)
	envByName           = ci(`^\s*(?:\[|\.\s*(?:get|setdefault|pop|update|clear|__contains__|__getitem__|__setitem__|__delitem__)\b)`)
	forIn               = ci(`\bfor\b[^#]*\bin\s*$`)
	inMember            = ci(`\b(?:not\s+)?in\s*$`)
	jsEnvWhole          = ci(`process\.env\b`)
	jsEnvByName         = ci(`^\s*(?:\.\s*\w|\?\.|\[)`)
	shellGather         = ci("(?:^|[;&|(`]|\\$\\()\\s*(?:printenv|env)\\s*(?:$|[|>;)`&])")
	embeddedShellGather = ci("\\bprintenv\\s*(?:$|[|>;)`&\"'])|\\$\\(\\s*(?:printenv|env)\\s*\\)|`\\s*(?:printenv|env)\\s*`|[\"']env\\s*\\|")
	rubyGather          = lazyre.New(`\bENV\.(?:to_h|to_a|each|inspect|to_hash|keys|values|map)\b`)
	goGather            = lazyre.New(`\bos\.Environ\s*\(`)
	childEnv            = ci(`\benv\s*[=:]\s*(?:dict\s*\(|\{\s*(?:\*\*|\.\.\.)|os\.environ|process\.env|os\.Environ)`)
	// The environment handed to a process being started is the child's, not a gather.
	processCall = ci(`\b(?:posix_spawnp?|spawn\w*|execv?p?e|Popen|subprocess\.\w+|child_process\.\w+|execFile(?:Sync)?|execSync)\s*\(`)
	// Iteration filtered to a named prefix reads the plugin's own settings.
	prefixFilter = ci(`\.startswith\(\s*["'][A-Za-z0-9_]+["']|\.startsWith\(\s*["'][A-Za-z0-9_]+["']`)
	// A socket over an inherited descriptor or a Unix socket reaches no network.
	localSocket = ci(`\bAF_UNIX\b|\bfileno\s*=|\bsocketpair\s*\(`)
	assignTo    = ci(`^\s*(?:(?:const|let|var)\s+)?([A-Za-z_]\w*)\s*(?::[^=]*)?=[^=]`)

	credHome   = ci(`(?:~|\$HOME|\$\{HOME\}|%USERPROFILE%)[/\\]\.(?:ssh|aws|gnupg|kube|docker|netrc|pgpass|npmrc|pypirc|git-credentials)\b`)
	credQuoted = ci(`["'](?:[^"'\n]*[/\\])?\.(?:ssh|aws|gnupg|kube|docker|netrc|pgpass|npmrc|pypirc|git-credentials|env)(?:[/\\][^"'\n]*)?["']`)
	credKey    = ci(`\bid_(?:rsa|ed25519|ecdsa|dsa)\b`)
	dotenvLoad = ci(`\b(?:load_dotenv|dotenv_values|dotenv\.config|require\(\s*["']dotenv["']\s*\))`)

	sinkRe = ci(`\brequests\.(?:post|put|patch|get|request)\s*\(|\brequests\.Session\s*\(|\bhttpx\.(?:post|put|patch|get|request|Client|AsyncClient)\s*\(` +
		`|\burlopen\s*\(|\bHTTPS?Connection\s*\(|\bcreate_connection\s*\(|\bsocket\.socket\s*\(|\bClientSession\s*\(` +
		`|\bsession\.(?:post|put|patch)\s*\(|\bsmtplib\.SMTP(?:_SSL)?\s*\(|\bftplib\.FTP\s*\(|\bfetch\s*\(|\baxios(?:\.\w+)?\s*\(` +
		`|\bhttps?\.(?:request|get)\s*\(|XMLHttpRequest|sendBeacon|\bnet\.(?:connect|createConnection)\s*\(|\bnew\s+WebSocket\b` +
		`|\bcurl\s|\bwget\s|\bnc\s|/dev/tcp/|\bscp\s|\brsync\s|Net::HTTP\.\w+|RestClient\.\w+` +
		`|\bhttp\.(?:Post|Get|PostForm|NewRequest\w*)\s*\(|\.Do\s*\(\s*req\b|\bnet\.Dial\w*\s*\(|\.sendall\s*\(`)
	importLine = ci(`^\s*(?:import\s|from\s+\S+\s+import\s|(?:const|let|var)\s+\w+\s*=\s*require\s*\(|require\s*\(|#\s*include)`)
	loopHost   = ci(`\blocalhost\b|\b127\.\d+\.\d+\.\d+\b|\[::1\]|["']::1["']`)

	envReadOrder = []string{"os.environ", "getenv", "process.env", "env["}
	// Reads of one variable by name, per literal.
	envReadByLit = map[string]*lazyre.Regexp{
		"os.environ":  ci(`os\.environ\s*(?:\[\s*|\.get\s*\(\s*)["'](\w+)["']`),
		"getenv":      ci(`getenv\s*\(\s*["'](\w+)["']`),
		"process.env": ci(`process\.env(?:\.(\w+)|\[\s*["'](\w+)["'])`),
		"env[":        lazyre.New(`\bENV\[\s*["'](\w+)["']`),
	}
	secretName = lazyre.New(`KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL`)
)

type sigSite struct {
	line int
	raw  []byte // the line (or window)
	text string
	v    string // gather: the variable it is assigned to
}

// candidate is a line where a signal's literal occurs; it is only examined at the end
// of the file, and only when the other half of the correlation can still occur.
type candidate struct {
	kind       sigKind
	line       int
	start, end int // the line, or a window of a long one
	hit, lit   int // where the literal starts, and which it is
}

type signalState struct {
	seen  [nSigKinds]int // last line number recorded per kind (one candidate per line)
	cands []candidate
}

func (sg *signalState) onSignal(st *fileState, kind int, start, lit int) {
	if !st.pc.code || sg.seen[kind] == st.lineNo {
		return
	}
	// A literal that starts with a letter must start a word ("nc " in "async " is no
	// netcat, "curl" in "ncurl" no curl).
	if l := st.eng.lits[lit]; isWord(l[0]) && start > 0 && isWord(st.data[start-1]) {
		return
	}
	sg.seen[kind] = st.lineNo
	c := candidate{kind: sigKind(kind), line: st.lineNo, start: st.lineStart, end: st.lineEnd, hit: start, lit: lit}
	if c.end-c.start > maxLineScan {
		c.start, c.end = max(st.lineStart, start-lineWindow), min(st.lineEnd, start+lineWindow)
	}
	sg.cands = append(sg.cands, c)
}

// examine runs the checks of one kind on its candidates.
func (sg *signalState) examine(st *fileState, kinds ...sigKind) []sigSite {
	var out []sigSite
	for _, c := range sg.cands {
		want := false
		for _, k := range kinds {
			want = want || c.kind == k
		}
		if !want {
			continue
		}
		line := st.data[c.start:c.end]
		if isCommentLine(line, st.pc.commentPrefixes) {
			continue
		}
		site := sigSite{line: c.line}
		switch c.kind {
		case sigGatherPy, sigGatherJS, sigGatherSh, sigGatherRb:
			if !gathers(c.kind, line, st.pc.ext) || childEnv.Match(line) || (c.kind != sigGatherSh && processCall.Match(line)) {
				continue // not the whole environment, or a copy for a child process
			}
			if prefixFilter.Match(line) {
				continue // the plugin's own namespace: k.startswith("MYPLUGIN_")
			}
			if m := assignTo.FindSubmatch(line); m != nil {
				site.v = string(m[1])
			}
		case sigCred:
			if dotenvLoad.Match(line) || !(credHome.Match(line) || credQuoted.Match(line) || credKeyNotPub(line)) {
				continue
			}
		case sigSink:
			if importLine.Match(line) || !sinkRe.Match(line) || localSocket.Match(line) {
				continue
			}
		case sigEnvRead:
			lower := lowerASCII(line)
			for _, lit := range envReadOrder { // a line may read several ways
				re := envReadByLit[lit]
				if !bytes.Contains(lower, []byte(lit)) {
					continue
				}
				for _, m := range re.FindAllSubmatch(line, -1) {
					for _, g := range m[1:] {
						if len(g) == 0 {
							continue
						}
						name := strings.ToUpper(string(g))
						if secretName.MatchString(name) && !st.fsc.declEnv[name] {
							out = append(out, sigSite{line: c.line, text: cutMatch(line), v: string(g)})
						}
					}
				}
			}
			continue
		}
		site.text, site.raw = cutMatch(line), line
		out = append(out, site)
	}
	return out
}

func credKeyNotPub(line []byte) bool {
	for _, loc := range credKey.FindAllIndex(line, -1) {
		if !hasPrefixFold(line[loc[1]:], ".pub") {
			return true
		}
	}
	return false
}

// gathers: the line takes the whole environment, not one variable by name.
func gathers(kind sigKind, line []byte, ext string) bool {
	switch kind {
	case sigGatherPy:
		for _, loc := range envIter.FindAllIndex(line, -1) {
			before, after := line[:loc[0]], line[loc[1]:]
			switch {
			case envMethods.Match(after):
				return true
			case envByName.Match(after):
				continue
			case forIn.Match(before):
				return true
			case inMember.Match(before):
				continue // "X" in os.environ
			default:
				return true // the mapping itself as a value: dict(os.environ), json.dumps(os.environ)
			}
		}
		return goGather.Match(line)
	case sigGatherJS:
		for _, loc := range jsEnvWhole.FindAllIndex(line, -1) {
			if !jsEnvByName.Match(line[loc[1]:]) {
				return true
			}
		}
		return false
	case sigGatherSh:
		if ext == ".sh" || ext == ".bash" {
			return shellGather.Match(line)
		}
		// Elsewhere (a command string in Python or JS) only the unmistakable forms.
		return embeddedShellGather.Match(line)
	}
	return rubyGather.Match(line)
}

// findings turns the file's signals into the correlation findings. Checks run in the
// order that lets most files stop early: a file with no source (whole environment,
// credential file, undeclared secret read) needs no look at its network calls.
func (sg *signalState) findings(st *fileState) []Finding {
	if len(sg.cands) == 0 {
		return nil
	}
	has := func(k sigKind) bool {
		for _, c := range sg.cands {
			if c.kind == k {
				return true
			}
		}
		return false
	}
	if !has(sigSink) {
		return nil
	}
	gathers := sg.examine(st, sigGatherPy, sigGatherJS, sigGatherSh, sigGatherRb)
	creds := sg.examine(st, sigCred)
	reads := sg.examine(st, sigEnvRead)
	if len(gathers) == 0 && len(creds) == 0 && len(reads) == 0 {
		return nil
	}
	var remote []sigSite
	var fileLoop, urlsDone bool
	for _, s := range sg.examine(st, sigSink) {
		line := s.raw
		loop := int8(0)
		if urls := urlRe.FindAll(line, -1); len(urls) > 0 {
			loop = 1
			for _, u := range urls {
				if !isLoopbackURL(u) {
					loop = -1
				}
			}
		} else if loopHost.Match(line) {
			loop = 1
		}
		if loop == 0 && !urlsDone {
			// A sink with no address on its line is judged by the file's URLs:
			// loopback only when the file names URLs and all of them are loopback.
			urlsDone = true
			n := 0
			fileLoop = true
			for _, c := range sg.cands {
				if c.kind != sigURL {
					continue
				}
				for _, u := range urlRe.FindAll(st.data[c.start:c.end], -1) {
					n++
					fileLoop = fileLoop && isLoopbackURL(u)
				}
			}
			fileLoop = fileLoop && n > 0
		}
		if loop == -1 || (loop == 0 && !fileLoop) {
			remote = append(remote, s)
		}
	}
	if len(remote) == 0 {
		return nil
	}
	var out []Finding
	// Gathers assigned to a variable that only ever goes to a child process as env=
	// are not gathers.
	var real []sigSite
	for _, g := range gathers {
		if g.v != "" && childOnly(st.data, g.v, remote) {
			continue
		}
		real = append(real, g)
	}
	var what string
	var src sigSite
	switch {
	case len(real) > 0:
		src, what = real[0], "gathers the whole environment"
	case len(creds) > 0:
		src, what = creds[0], "reads credential files or key directories"
	}
	if what != "" {
		sink := remote[0]
		sev := sevCritical
		if st.pc.testTree {
			sev = sevHigh
		}
		out = append(out, Finding{PatternID: correlatedID, Severity: sev, Category: "exfiltration", File: st.rel,
			Line: sink.line, Match: sink.text,
			Description: fmt.Sprintf("%s (line %d: %q) and sends data to a non-loopback network destination in the same file",
				what, src.line, trimTo(src.text, 60))})
	}
	seen := map[string]bool{}
	sort.SliceStable(reads, func(i, j int) bool { return reads[i].line < reads[j].line })
	for _, r := range reads {
		if seen[r.v] {
			continue
		}
		seen[r.v] = true
		out = append(out, Finding{PatternID: "undeclared_secret_env", Severity: sevMedium, Category: "exfiltration",
			File: st.rel, Line: r.line, Match: r.text,
			Description: fmt.Sprintf("reads %s, which plugin.yaml does not declare in requires_env, in a file that sends data over the network", r.v)})
	}
	return out
}

// childOnly: variable v is passed as env= (or env:) and appears on no remote sink line.
func childOnly(data []byte, v string, remote []sigSite) bool {
	for _, s := range remote {
		if lazyre.New(`\b` + regexp.QuoteMeta(v) + `\b`).Match(s.raw) {
			return false
		}
	}
	return lazyre.New(`\benv\s*[=:]\s*` + regexp.QuoteMeta(v) + `\b`).Match(data)
}

func trimTo(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
