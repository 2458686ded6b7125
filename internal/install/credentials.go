package install

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/reaper"
)

// Credential is one username/password (or token) pair for an https git remote.
type Credential struct {
	Username string
	Password string
	// Source says where it came from ("GITHUB_TOKEN", "gh auth token", "git credential
	// fill", ...), for messages; it never holds the secret.
	Source string
}

// DefaultGitHubHosts are the hosts GitHub tokens (GITHUB_TOKEN, GH_TOKEN, gh) apply to.
var DefaultGitHubHosts = []string{"github.com", "gist.github.com"}

// Credentials finds credentials for private https repositories in upstream's order:
// GITHUB_TOKEN / GH_TOKEN from the environment or $HERMES_HOME/.env (GitHub hosts
// only), then `gh auth token` (GitHub hosts only), then `git credential fill` (any
// host). Credentials reach git only as a one-shot Authorization header in git's
// environment (HeaderEnv): never in the URL, .git/config, metadata or logs.
type Credentials struct {
	// Env reads the environment (os.Getenv in production).
	Env func(string) string
	// DotenvPath is $HERMES_HOME/.env.
	DotenvPath string
	// Git runs `git credential fill`.
	Git *Git
	// GitHubHosts are the hosts GitHub tokens are sent to; nil means DefaultGitHubHosts.
	// Tests point it at a loopback server.
	GitHubHosts []string
	// GH is the gh binary; "" looks "gh" up on the PATH from Env.
	GH string
	// Reaper runs gh in a cell of its own (nil: its process group only).
	Reaper *reaper.Reaper
}

// lookup is a lazily evaluated credential source.
type lookup struct {
	name string
	get  func(ctx context.Context) (Credential, bool)
}

func (c *Credentials) env(k string) string {
	if c == nil || c.Env == nil {
		return ""
	}
	return c.Env(k)
}

func (c *Credentials) isGitHub(host string) bool {
	hosts := c.GitHubHosts
	if hosts == nil {
		hosts = DefaultGitHubHosts
	}
	h := strings.ToLower(host)
	for _, g := range hosts {
		if strings.EqualFold(g, h) {
			return true
		}
	}
	return false
}

// sources lists the lookups that apply to rawURL, in order. Nothing runs until a
// lookup's get is called, so public repositories never trigger gh or a helper.
func (c *Credentials) sources(rawURL string) []lookup {
	if c == nil {
		return nil
	}
	scheme, host, ok := origin(rawURL)
	if !ok {
		return nil // ssh and file sources: the ssh agent or the file system decides
	}
	var out []lookup
	if c.isGitHub(host) {
		for _, k := range []string{"GITHUB_TOKEN", "GH_TOKEN"} {
			k := k
			out = append(out, lookup{k, func(context.Context) (Credential, bool) {
				if v := strings.TrimSpace(c.env(k)); v != "" {
					return Credential{"x-access-token", v, k}, true
				}
				if c.DotenvPath != "" {
					if vals, err := config.ReadDotenv(c.DotenvPath); err == nil {
						if v := strings.TrimSpace(vals[k]); v != "" {
							return Credential{"x-access-token", v, k + " (.env)"}, true
						}
					}
				}
				return Credential{}, false
			}})
		}
		out = append(out, lookup{"gh auth token", c.ghToken})
	}
	out = append(out, lookup{"git credential fill", func(ctx context.Context) (Credential, bool) {
		return c.credentialFill(ctx, scheme, host)
	}})
	return out
}

// ghToken asks the GitHub CLI for its token, with the token variables unset so gh
// reports its own login, and prompts disabled.
func (c *Credentials) ghToken(ctx context.Context) (Credential, bool) {
	bin := c.GH
	if bin == "" {
		bin = lookPath("gh", c.env("PATH"))
		if bin == "" {
			return Credential{}, false
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "auth", "token")
	var env []string
	for _, k := range []string{"PATH", "HOME", "XDG_CONFIG_HOME", "GH_CONFIG_DIR", "GH_HOST"} {
		if v := c.env(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	cmd.Env = append(env, "GH_PROMPT_DISABLED=1", "NO_COLOR=1")
	cmd.WaitDelay = 2 * time.Second
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := c.Reaper.Run(cmd); err != nil {
		return Credential{}, false
	}
	tok := strings.TrimSpace(out.String())
	if tok == "" || strings.ContainsAny(tok, " \n\t") {
		return Credential{}, false
	}
	return Credential{"x-access-token", tok, "gh auth token"}, true
}

// credentialFill asks git's configured credential helpers, never a terminal.
func (c *Credentials) credentialFill(ctx context.Context, scheme, host string) (Credential, bool) {
	if c.Git == nil {
		return Credential{}, false
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	in := fmt.Sprintf("protocol=%s\nhost=%s\n\n", scheme, host)
	// The helpers must run here, so this call keeps credential.helper.
	cfg := make([]string, 0, len(hardening))
	for _, h := range hardening {
		if !strings.HasPrefix(h, "credential.helper") {
			cfg = append(cfg, h)
		}
	}
	out, err := c.Git.run(ctx, "", nil, nil, []byte(in), cfg, "credential", "fill")
	if err != nil {
		return Credential{}, false
	}
	var cred Credential
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "=")
		switch k {
		case "username":
			cred.Username = v
		case "password":
			cred.Password = v
		}
	}
	if cred.Password == "" {
		return Credential{}, false
	}
	if cred.Username == "" {
		cred.Username = "x-access-token"
	}
	cred.Source = "git credential fill"
	return cred, true
}

// HeaderEnv is the environment that makes git send cred to rawURL's origin as a
// basic Authorization header for this one command (GIT_CONFIG_COUNT/KEY/VALUE), so
// it is never written to a config file or put in a URL.
func HeaderEnv(rawURL string, cred Credential) []string {
	scheme, host, ok := origin(rawURL)
	if !ok {
		return nil
	}
	auth := base64.StdEncoding.EncodeToString([]byte(cred.Username + ":" + cred.Password))
	return []string{
		"GIT_CONFIG_COUNT=1",
		"GIT_CONFIG_KEY_0=http." + scheme + "://" + host + "/.extraheader",
		"GIT_CONFIG_VALUE_0=Authorization: Basic " + auth,
	}
}

// secretsOf lists every form of cred that must never be printed.
func secretsOf(cred Credential) []string {
	if cred.Password == "" {
		return nil
	}
	return []string{
		cred.Password,
		base64.StdEncoding.EncodeToString([]byte(cred.Username + ":" + cred.Password)),
	}
}

func lookPath(name, pathEnv string) string {
	for _, dir := range filepath.SplitList(pathEnv) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// withCredentials runs op anonymously first; when it fails in a way credentials
// could fix, it tries each distinct credential in order (a stale token in .env must
// not shadow a working gh login). op gets the extra environment and the secrets to
// redact. The returned error is the last failure, with a private-repository hint.
func (c *Credentials) withCredentials(ctx context.Context, rawURL string, embedded *Credential, op func(env, secrets []string) error) error {
	var tries []lookup
	if embedded != nil {
		e := *embedded
		tries = append(tries, lookup{"URL", func(context.Context) (Credential, bool) { return e, true }})
	}
	err := op(nil, nil)
	if err == nil || !needsCredentials(err) {
		return err
	}
	tries = append(tries, c.sources(rawURL)...)
	seen := map[string]bool{}
	tried := 0
	for _, l := range tries {
		cred, ok := l.get(ctx)
		if !ok || seen[cred.Username+"\x00"+cred.Password] {
			continue
		}
		seen[cred.Username+"\x00"+cred.Password] = true
		tried++
		err = op(HeaderEnv(rawURL, cred), secretsOf(cred))
		if err == nil || !needsCredentials(err) {
			return err
		}
	}
	if _, _, isHTTP := origin(rawURL); isHTTP {
		hint := "No credentials were found for this host."
		if tried > 0 {
			hint = fmt.Sprintf("%d credential(s) were tried and refused.", tried)
		}
		return fmt.Errorf("%w\nThe repository may be private or may not exist. %s Set GITHUB_TOKEN in $HERMES_HOME/.env (GitHub), log in with `gh auth login`, or store credentials with a git credential helper; for ssh sources load your key into ssh-agent", err, hint)
	}
	return err
}
