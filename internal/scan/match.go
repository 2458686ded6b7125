package scan

import (
	"bytes"

	"github.com/hermes-go/hermes/internal/lazyre"
)

// Checks for the upstream patterns that use look-around, which RE2 lacks. Each one
// keeps the upstream meaning; the comment names the look-around it replaces.

var loopbackURL = ci(`https?://(?:localhost|127\.0\.0\.1|\[::1\])`)

// notLoopbackAfter: `<head>(?![^\n]*https?://(localhost|127.0.0.1|[::1]))[^\n]*<tail>`:
// some occurrence of head is followed, on the rest of the line, by tail and by no
// loopback URL (a same-line loopback destination cannot move data off the machine).
// Linear: the first head past the last loopback URL is the best candidate, and it
// qualifies when some tail starts after it.
func notLoopbackAfter(head, tail *lazyre.Regexp) func([]byte) bool {
	return func(line []byte) bool {
		heads := head.FindAllIndex(line, -1)
		if heads == nil {
			return false
		}
		lastLoop := -1
		for _, l := range loopbackURL.FindAllIndex(line, -1) {
			lastLoop = l[0]
		}
		for _, h := range heads {
			if h[1] <= lastLoop {
				continue
			}
			return tail.Match(line[h[1]:])
		}
		return false
	}
}

var (
	jsReadArg    = ci(`\b(?:readFile(?:Sync)?|readTextFile)\s*\(\s*["']([^"'\n]*)["']`)
	jsSecretPath = ci(`\.env\b|credentials\b|\.netrc\b|\.pgpass\b|\.npmrc\b|\.pypirc\b`)
	jsSSHKey     = ci(`\.ssh[/\\]id_(?:rsa|ed25519|ecdsa|dsa)`)
)

// jsReadSecrets: a readFile call whose quoted path names a credential file; a
// `.ssh/id_*` path counts unless it is the public key (`(?!\.pub)`).
func jsReadSecrets(line []byte) bool {
	for _, m := range jsReadArg.FindAllSubmatch(line, -1) {
		arg := m[1]
		if jsSecretPath.Match(arg) {
			return true
		}
		for _, loc := range jsSSHKey.FindAllIndex(arg, -1) {
			if !hasPrefixFold(arg[loc[1]:], ".pub") {
				return true
			}
		}
	}
	return false
}

var osEnviron = ci(`os\.environ\b`)
var dotGetCall = ci(`^\s*\.get\s*\(`)

// pythonOsEnviron: `^[^#\n]*os\.environ\b(?!\s*\.get\s*\()`: an os.environ before any
// '#' on the line that is not an `.get(` call.
func pythonOsEnviron(line []byte) bool {
	limit := len(line)
	if i := bytes.IndexByte(line, '#'); i >= 0 {
		limit = i
	}
	for _, loc := range osEnviron.FindAllIndex(line[:limit], -1) {
		if !dotGetCall.Match(line[loc[1]:]) {
			return true
		}
	}
	return false
}

var dnsExfilRe = ci(`\b(?:dig|nslookup|host)\s+(?:[-+@]\S*(?:\s+[^\s$"'-][^\s$]*)?\s+)*["']?[^\s"'$]*\$`)

// dnsExfil: the lookup command is not preceded by '-' or '/' (`(?<![-/])`), so
// `--host 127.0.0.1 --port $PORT` does not count.
func dnsExfil(line []byte) bool {
	for _, loc := range dnsExfilRe.FindAllIndex(line, -1) {
		if s := loc[0]; s == 0 || (line[s-1] != '-' && line[s-1] != '/') {
			return true
		}
	}
	return false
}

var (
	deceptionRe   = ci(`do\s+not\s+(?:\w+\s+)*tell\s+(?:\w+\s+)*the\s+user`)
	theUser       = ci(`the\s+user`)
	deceptionExit = ci(`\b(?:unless|except|until|confirm|diagnose|verify|check)\b`)
)

// deceptionHide: `... the user(?!.*\b(unless|except|until|confirm|...)\b)`: concealment,
// not UX guidance ("don't tell the user X unless Y confirms").
func deceptionHide(line []byte) bool {
	loc := deceptionRe.FindIndex(line)
	if loc == nil {
		return false
	}
	// The latest "the user" leaves the shortest tail for the exemption words.
	end := loc[1]
	for _, l := range theUser.FindAllIndex(line[loc[1]:], -1) {
		end = loc[1] + l[1]
	}
	return !deceptionExit.Match(line[end:])
}

var rootRm = ci(`rm\s+-rf\s+/`)

// destructiveRootRm: `rm -rf /` except under the temp roots (`(?!tmp(\b|/)|var/tmp...)`).
func destructiveRootRm(line []byte) bool {
	for _, loc := range rootRm.FindAllIndex(line, -1) {
		rest := line[loc[1]:]
		if !(tempRoot(rest, "tmp") || tempRoot(rest, "var/tmp") || tempRoot(rest, "dev/shm") || tempRoot(rest, "run")) {
			return true
		}
	}
	return false
}

// tempRoot: rest starts with dir followed by a word boundary or '/'.
func tempRoot(rest []byte, dir string) bool {
	if !hasPrefixFold(rest, dir) {
		return false
	}
	return len(rest) == len(dir) || !isWord(rest[len(dir)])
}

var (
	shellRCFiles = ci(`\.(?:bashrc|zshrc|bash_profile|bash_login|zprofile|zlogin)\b`)
	dotProfile   = ci(`\.profile\b`)
)

// shellRC: the rc files, and `.profile` unless it is attribute access
// (`(?<![\w)\]?])\.profile\b`: self.profile, data?.profile, f().profile).
func shellRC(line []byte) bool {
	if shellRCFiles.Match(line) {
		return true
	}
	for _, loc := range dotProfile.FindAllIndex(line, -1) {
		if loc[0] == 0 {
			return true
		}
		c := line[loc[0]-1]
		if !isWord(c) && c != ')' && c != ']' && c != '?' {
			return true
		}
	}
	return false
}

var (
	pipInstall = ci(`pip\s+install\s+`)
	dashR      = ci(`^-r\s`)
	npmInstall = ci(`npm\s+install\s+`)
	atDigit    = lazyre.New(`@\d`)
)

// unpinnedPip: `pip\s+install\s+(?!-r\s)(?!.*==)`.
func unpinnedPip(line []byte) bool {
	lastEq := bytes.LastIndex(line, []byte("=="))
	for _, loc := range pipInstall.FindAllIndex(line, -1) {
		rest := line[loc[1]:]
		if !dashR.Match(rest) && loc[1] > lastEq {
			return true
		}
	}
	return false
}

// unpinnedNpm: `npm\s+install\s+(?!.*@\d)`.
func unpinnedNpm(line []byte) bool {
	lastAt := -1
	for _, l := range atDigit.FindAllIndex(line, -1) {
		lastAt = l[0]
	}
	for _, loc := range npmInstall.FindAllIndex(line, -1) {
		if loc[1] > lastAt {
			return true
		}
	}
	return false
}

var sudoWord = ci(`\bsudo\b`)

// sudoUsage: `\bsudo\b(?!\.(?:request|respond)\b)`: the gateway's sudo.request and
// sudo.respond wire events are not an invocation.
func sudoUsage(line []byte) bool {
	for _, loc := range sudoWord.FindAllIndex(line, -1) {
		rest := line[loc[1]:]
		if (hasPrefixFold(rest, ".request") && (len(rest) == 8 || !isWord(rest[8]))) ||
			(hasPrefixFold(rest, ".respond") && (len(rest) == 8 || !isWord(rest[8]))) {
			continue
		}
		return true
	}
	return false
}

// notWordAfter: re, then `(?!\.?\w)`: the file name is not the prefix of a longer name
// (AGENTS.md.bak, CLAUDE.mdx).
func notWordAfter(re *lazyre.Regexp) func([]byte) bool {
	return func(line []byte) bool {
		for _, loc := range re.FindAllIndex(line, -1) {
			rest := line[loc[1]:]
			if len(rest) > 0 && isWord(rest[0]) {
				continue
			}
			if len(rest) > 1 && rest[0] == '.' && isWord(rest[1]) {
				continue
			}
			return true
		}
		return false
	}
}

var (
	ctxTransfer = ci(`\b(?:include|output|print|send|share)\s+((?:\w+\s+){0,3}?)(?:conversation|chat\s+history|previous\s+messages)\b` +
		`|\b(?:print|send|share)\s+((?:\w+\s+){0,3}?)context\b`)
	negationWords = ci(`^(?:\w+\s+){0,4}?(?:never|not|doesn'?t|didn'?t|won'?t|isn'?t|aren'?t|can'?t|cannot|mustn'?t|shouldn'?t)\b`)
	verbAndSpace  = ci(`^\w+\s+`)
)

// contextExfil: a transfer verb aimed at the conversation/context, unless a negation
// follows the verb within a few words (`_NO_TRANSFER` lookahead).
func contextExfil(line []byte) bool {
	for _, loc := range ctxTransfer.FindAllIndex(line, -1) {
		m := line[loc[0]:]
		v := verbAndSpace.FindIndex(m)
		if v == nil {
			continue
		}
		if !negationWords.Match(m[v[1]:]) {
			return true
		}
	}
	return false
}

func isWord(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func hasPrefixFold(b []byte, p string) bool {
	if len(b) < len(p) {
		return false
	}
	for i := 0; i < len(p); i++ {
		if fold[b[i]] != fold[p[i]] {
			return false
		}
	}
	return true
}
