package scan

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
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
	sigGather sigKind = iota
	sigCred
	sigSink
	sigURL
	sigEnvRead
)

type signalDef struct {
	kind sigKind
	lits []string
}

var signals = []signalDef{
	{sigGather, []string{"os.environ", "process.env", "printenv", "env|", "env |", "env >", "env>", "$(env", "`env`",
		"env.to_h", "env.to_a", "env.each", "env.inspect", "env.to_hash", "env.keys", "env.values", "env.map"}},
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
	envIter     = ci(`os\.environ\b`)
	envMethods  = ci(`^\s*\.\s*(?:copy|items|keys|values|__repr__|__str__)\s*\(`)
	envByName   = ci(`^\s*(?:\[|\.\s*(?:get|setdefault|pop|update|__contains__|__getitem__|__setitem__)\b)`)
	forIn       = ci(`\bfor\b[^#]*\bin\s*$`)
	inMember    = ci(`\b(?:not\s+)?in\s*$`)
	jsEnvWhole  = ci(`process\.env\b`)
	jsEnvByName = ci(`^\s*(?:\.\s*\w|\?\.|\[)`)
	shellGather = ci("(?:^|[;&|(`]|\\$\\()\\s*(?:printenv|env)\\s*(?:$|[|>;)`&])")
	rubyGather  = regexp.MustCompile(`\bENV\.(?:to_h|to_a|each|inspect|to_hash|keys|values|map)\b`)
	goGather    = regexp.MustCompile(`\bos\.Environ\s*\(`)
	childEnv    = ci(`\benv\s*[=:]\s*(?:dict\s*\(|\{\s*(?:\*\*|\.\.\.)|os\.environ|process\.env|os\.Environ)`)
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

	envNameRead = ci(`os\.environ\s*(?:\[\s*|\.get\s*\(\s*)["'](\w+)["']|\bgetenv\s*\(\s*["'](\w+)["']` +
		`|process\.env\.(\w+)|process\.env\[\s*["'](\w+)["']|\bENV\[\s*["'](\w+)["']|os\.Getenv\(\s*"(\w+)"`)
	secretName = regexp.MustCompile(`KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL`)
)

type sigSite struct {
	line int
	text string
	v    string // gather: the variable it is assigned to
}

type signalState struct {
	seen     [5]int // last line number seen per kind (dedupe)
	gathers  []sigSite
	creds    []sigSite
	sinks    []sigSite // with loop = sinkLoopback/unknown
	sinkLoop []int8    // 1 loopback, 0 unknown (decided by the file's URLs), -1 remote
	urls     []bool    // per URL: loopback
	reads    []sigSite // undeclared secret-shaped reads (v = name)
	childEnv map[string]bool
}

func (sg *signalState) onSignal(st *fileState, kind int, start int) {
	if !st.pc.code {
		return
	}
	if sg.seen[kind] == st.lineNo {
		return
	}
	sg.seen[kind] = st.lineNo
	line := st.data[st.lineStart:st.lineEnd]
	if len(line) > maxLineScan {
		line = st.data[max(st.lineStart, start-lineWindow):min(st.lineEnd, start+lineWindow)]
	}
	if isCommentLine(line, st.pc.commentPrefixes) {
		return
	}
	site := sigSite{line: st.lineNo}
	switch sigKind(kind) {
	case sigGather:
		if !gathersEnv(line) {
			return
		}
		if childEnv.Match(line) {
			return // a copy of the environment for a child process
		}
		if m := assignTo.FindSubmatch(line); m != nil {
			site.v = string(m[1])
		}
		site.text = cutMatch(line)
		sg.gathers = append(sg.gathers, site)
	case sigCred:
		if dotenvLoad.Match(line) {
			return
		}
		if credHome.Match(line) || credQuoted.Match(line) || credKeyNotPub(line) {
			site.text = cutMatch(line)
			sg.creds = append(sg.creds, site)
		}
	case sigSink:
		if importLine.Match(line) || !sinkRe.Match(line) {
			return
		}
		site.text = cutMatch(line)
		var loop int8
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
		sg.sinks = append(sg.sinks, site)
		sg.sinkLoop = append(sg.sinkLoop, loop)
	case sigURL:
		for _, u := range urlRe.FindAll(line, -1) {
			sg.urls = append(sg.urls, isLoopbackURL(u))
		}
	case sigEnvRead:
		for _, m := range envNameRead.FindAllSubmatch(line, -1) {
			for _, g := range m[1:] {
				if len(g) == 0 {
					continue
				}
				name := strings.ToUpper(string(g))
				if secretName.MatchString(name) && !st.fsc.declEnv[name] {
					sg.reads = append(sg.reads, sigSite{line: st.lineNo, text: cutMatch(line), v: string(g)})
				}
			}
		}
	}
}

func credKeyNotPub(line []byte) bool {
	for _, loc := range credKey.FindAllIndex(line, -1) {
		if !hasPrefixFold(line[loc[1]:], ".pub") {
			return true
		}
	}
	return false
}

// gathersEnv: the line takes the whole environment, not one variable by name.
func gathersEnv(line []byte) bool {
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
	for _, loc := range jsEnvWhole.FindAllIndex(line, -1) {
		if !jsEnvByName.Match(line[loc[1]:]) {
			return true
		}
	}
	return shellGather.Match(line) || rubyGather.Match(line) || goGather.Match(line)
}

// findings turns the file's signals into the correlation findings.
func (sg *signalState) findings(st *fileState) []Finding {
	if len(sg.sinks) == 0 {
		return nil
	}
	// A sink with no address on its line is judged by the file's URLs: loopback only
	// when the file names URLs and all of them are loopback.
	fileLoop := len(sg.urls) > 0
	for _, l := range sg.urls {
		fileLoop = fileLoop && l
	}
	var remote []sigSite
	for i, s := range sg.sinks {
		if sg.sinkLoop[i] == -1 || (sg.sinkLoop[i] == 0 && !fileLoop) {
			remote = append(remote, s)
		}
	}
	if len(remote) == 0 {
		return nil
	}
	var out []Finding
	// Gathers assigned to a variable that only ever goes to a child process as env=
	// are not gathers.
	var gathers []sigSite
	for _, g := range sg.gathers {
		if g.v != "" && childOnly(st.data, g.v, remote) {
			continue
		}
		gathers = append(gathers, g)
	}
	var what string
	var src sigSite
	switch {
	case len(gathers) > 0:
		src, what = gathers[0], "gathers the whole environment"
	case len(sg.creds) > 0:
		src, what = sg.creds[0], "reads credential files or key directories"
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
	sort.SliceStable(sg.reads, func(i, j int) bool { return sg.reads[i].line < sg.reads[j].line })
	for _, r := range sg.reads {
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
		if regexp.MustCompile(`\b` + regexp.QuoteMeta(v) + `\b`).MatchString(s.text) {
			return false
		}
	}
	return regexp.MustCompile(`\benv\s*[=:]\s*` + regexp.QuoteMeta(v) + `\b`).Match(data)
}

func trimTo(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
