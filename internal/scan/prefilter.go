package scan

import (
	"bytes"

	"github.com/hermes-go/hermes/internal/lazyre"
)

// Second-stage prefilters: the literal told us a rule may match on a line; these
// settle most such lines without running the regular expression (Go's regexp, with
// case folding, scans a line at tens of MB/s). Each is implied by the rule's pattern,
// so it never drops a match; TestRuleCorpus and TestLiteralsCoverMatches hold them
// to that.
func tunePrefilters(rs []*rule) {
	byID := map[string]*rule{}
	for _, r := range rs {
		byID[r.id] = r
	}
	// Every match starts with one of the rule's literals: run it anchored there.
	byID["hardcoded_secret"].anchored = lazyre.New(`(?i)^(?:api[_-]?key|token|secret|password)\s*[=:]\s*["'][A-Za-z0-9+/=_-]{20,}`)
	need := map[string][][]string{
		"unpinned_npm_install":         {{"npm"}},
		"unpinned_pip_install":         {{"pip"}},
		"echo_pipe_exec":               {{"|"}},
		"jailbreak_dan":                {{"dan", "now"}},
		"remote_fetch":                 {{"http"}, {"curl", "wget", "get", "fetch"}},
		"send_to_url":                  {{"send", "post", "upload", "transmit"}},
		"context_exfil":                {{"include", "output", "print", "send", "share"}},
		"role_hijack":                  {{"you"}, {"are"}},
		"python_compile_exec":          {{"exec"}, {"compile"}},
		"env_exfil_fetch":              {{"$"}},
		"env_exfil_curl":               {{"$"}},
		"env_exfil_wget":               {{"$"}},
		"env_exfil_httpx":              {{"key", "token", "secret", "password"}},
		"env_exfil_requests":           {{"key", "token", "secret", "password"}},
		"destructive_root_rm":          {{"rm"}},
		"read_secrets_file":            {{"cat"}},
		"python_environ_get_secret":    {{".get"}},
		"backtick_subshell":            {{"`"}},
		"dump_all_env":                 {{"printenv", "|"}},
		"fake_policy":                  {{"new", "updated", "revised"}},
		"bypass_restrictions":          {{"act"}, {"you"}},
		"leak_system_prompt":           {{"prompt"}},
		"prompt_injection_ignore":      {{"ignore"}},
		"deception_hide":               {{"not"}, {"user"}},
		"remove_filters":               {{"respond", "answer", "reply"}},
		"fake_update":                  {{"you"}},
		"dns_exfil":                    {{"$"}},
		"encoded_exfil":                {{"env"}},
		"agent_config_mod":             {{"writ", "edit", "modif", "updat", "append", "prepend", "inject", "overwrit", "replac", "alter", "add"}},
		"hermes_config_mod":            {{"writ", "edit", "modif", "updat", "append", "prepend", "inject", "overwrit", "replac", "alter", "add"}},
		"other_agent_config_mod":       {{"writ", "edit", "modif", "updat", "append", "prepend", "inject", "overwrit", "replac", "alter", "add"}},
		"agent_config_mod_shell":       {{">", "sed", "tee", "cp", "mv"}},
		"hermes_config_mod_shell":      {{">", "sed", "tee", "cp", "mv"}},
		"other_agent_config_mod_shell": {{">", "sed", "tee", "cp", "mv"}},
		"agent_config_contract":        {{"should", "must", "need"}},
	}
	for id, n := range need {
		byID[id].need = n
	}
	// remote_fetch ends at its literal: `<verb>\s*(?\s*["']https?://`, read backwards.
	byID["remote_fetch"].pre = func(data []byte, start int) bool {
		i := start
		switch {
		case i >= 5 && hasPrefixFold(data[i-5:], "https"):
			i -= 5
		case i >= 4 && hasPrefixFold(data[i-4:], "http"):
			i -= 4
		default:
			return false
		}
		if i < 1 || (data[i-1] != '"' && data[i-1] != '\'') {
			return false
		}
		i--
		for i > 0 && isSpace(data[i-1]) {
			i--
		}
		if i > 0 && data[i-1] == '(' {
			i--
		}
		for i > 0 && isSpace(data[i-1]) {
			i--
		}
		for _, verb := range []string{"curl", "wget", "http.get", "httpx.get", "requests.get", "fetch"} {
			if i >= len(verb) && hasPrefixFold(data[i-len(verb):], verb) {
				return true
			}
		}
		return false
	}
	// `rm\s+-rf\s+/`: the literal "-rf" is followed by blanks and a slash.
	byID["destructive_root_rm"].pre = func(data []byte, start int) bool {
		i := start + 3
		n := 0
		for i < len(data) && isSpace(data[i]) {
			i++
			n++
		}
		return n > 0 && i < len(data) && data[i] == '/'
	}
	// An `os.environ.get(` occurrence cannot be python_os_environ's match.
	byID["python_os_environ"].pre = func(data []byte, start int) bool {
		i := start + len("os.environ")
		for i < len(data) && isSpace(data[i]) {
			i++
		}
		return !hasPrefixFold(data[i:], ".get")
	}
	// An IP:port ends right before the ':' the literal found: digits, then a dot.
	byID["hardcoded_ip_port"].pre = func(data []byte, start int) bool {
		i := start // the digit before ':'
		n := 0
		for i >= 0 && data[i] >= '0' && data[i] <= '9' && n < 4 {
			i--
			n++
		}
		return n >= 1 && n <= 3 && i >= 0 && data[i] == '.'
	}
}

// needsMet: every need group has a member in the lower-cased line.
func needsMet(lower []byte, need [][]string) bool {
	for _, g := range need {
		ok := false
		for _, s := range g {
			if bytes.Contains(lower, []byte(s)) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r' }
