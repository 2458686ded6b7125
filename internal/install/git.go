package install

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/hermes-go/hermes/internal/lazyre"
	"github.com/hermes-go/hermes/internal/reaper"
)

// GitTimeout bounds one network git operation (clone, fetch, pull), as upstream.
const GitTimeout = 60 * time.Second

// Git is the one place hermes runs git. Every call is hardened: no terminal prompts,
// no askpass, no system config, no hooks, no submodules, no fsmonitor, and no
// inherited GIT_* variables that could point it at another repository.
type Git struct {
	// Path is the git binary ("git" when empty, looked up on PATH).
	Path string
	// Env reads the environment git inherits (os.Getenv in production).
	Env func(string) string
	// Environ lists the names of the variables to pass through; nil means a
	// conservative default set (PATH, HOME, locale, proxies, ssh agent, TLS).
	Environ []string
	// Reaper runs each git in a cell of its own, so its helpers (git-remote-http,
	// ssh) die with it when it is killed (nil: its process group only).
	Reaper *reaper.Reaper

	// trace, when set (tests), sees every command's arguments and outcome.
	trace func(args []string, err error)
}

// GitError is a failed git command with its redacted stderr.
type GitError struct {
	Args   []string
	Stderr string
	Err    error
}

func (e *GitError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("git %s: %s", strings.Join(e.Args, " "), msg)
}

func (e *GitError) Unwrap() error { return e.Err }

// passEnv are the variables git may see from the user's environment.
var passEnv = []string{
	"PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "XDG_CONFIG_HOME",
	"GIT_CONFIG_GLOBAL", // the user's global config, read instead of ~/.gitconfig (credential helpers)
	"SSH_AUTH_SOCK", "SSH_AGENT_PID", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_SSL_CAINFO", "GIT_SSL_CAPATH",
	"GIT_SSL_NO_VERIFY", "GIT_PROXY_COMMAND", "GIT_TRACE", "GIT_CURL_VERBOSE",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy", "ALL_PROXY", "all_proxy",
	"SSL_CERT_FILE", "SSL_CERT_DIR",
}

// hardening is passed with -c to every command.
var hardening = []string{
	"core.hooksPath=/dev/null",
	"core.fsmonitor=false",
	"submodule.recurse=false",
	"fetch.recurseSubmodules=false",
	"protocol.ext.allow=never",
	"credential.helper=", // hermes looks credentials up itself and passes them one-shot
	"init.templateDir=",
	"init.defaultBranch=main",
	"advice.detachedHead=false",
	"gc.auto=0",
}

func (g *Git) bin() string {
	if g.Path != "" {
		return g.Path
	}
	return "git"
}

// environ builds git's environment: the pass-through variables, the hardening, and
// extra (one-shot credential headers).
func (g *Git) environ(extra []string) []string {
	get := g.Env
	if get == nil {
		get = func(string) string { return "" }
	}
	names := g.Environ
	if names == nil {
		names = passEnv
	}
	var env []string
	for _, k := range names {
		if v := get(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	env = append(env,
		"GIT_TERMINAL_PROMPT=0",
		"GIT_CONFIG_NOSYSTEM=1",
		"GCM_INTERACTIVE=Never",
		"GIT_ASKPASS=",
		"SSH_ASKPASS=",
		"GIT_EDITOR=:",
		"GIT_PAGER=cat",
		"LC_MESSAGES=C",
	)
	if get("GIT_SSH_COMMAND") == "" && get("GIT_SSH") == "" {
		// ssh may use the agent but never ask for a passphrase or a host-key decision.
		env = append(env, "GIT_SSH_COMMAND=ssh -o BatchMode=yes")
	}
	return append(env, extra...)
}

// Run runs git with args in dir and returns its trimmed stdout. extraEnv is appended
// to the environment (credential headers); secrets lists strings to blank out of
// any error text.
func (g *Git) Run(ctx context.Context, dir string, extraEnv []string, secrets []string, args ...string) (string, error) {
	return g.run(ctx, dir, extraEnv, secrets, nil, hardening, args...)
}

func (g *Git) run(ctx context.Context, dir string, extraEnv, secrets []string, stdin []byte, config []string, args ...string) (string, error) {
	full := make([]string, 0, 2*len(config)+len(args))
	for _, h := range config {
		full = append(full, "-c", h)
	}
	full = append(full, args...)
	cmd := exec.CommandContext(ctx, g.bin(), full...)
	// git runs helpers (git-remote-https, ssh, upload-pack) that would outlive a
	// kill of git alone and keep its pipes open: an interrupt kills the group.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			return err
		}
		return nil
	}
	cmd.Dir = dir
	cmd.Env = g.environ(extraEnv)
	cmd.WaitDelay = 5 * time.Second
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := g.Reaper.Run(cmd) // a timeout or interrupt kills git's helpers too
	if g.trace != nil {
		g.trace(args, err)
	}
	if err != nil {
		var pe *fs.PathError
		if errors.Is(err, exec.ErrNotFound) || (errors.As(err, &pe) && pe.Path == cmd.Path) {
			return "", &GitError{Args: redactArgs(args, secrets), Stderr: "git is not installed or not on PATH; hermes needs it to install and update plugins", Err: err}
		}
		if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("Git operation timed out after %s: %w", GitTimeout, ctx.Err())
		}
		return "", &GitError{Args: redactArgs(args, secrets), Stderr: Redact(stderr.String(), secrets), Err: err}
	}
	return strings.TrimSpace(stdout.String()), nil
}

// RunNet is Run with the network timeout.
func (g *Git) RunNet(ctx context.Context, dir string, extraEnv, secrets []string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, GitTimeout)
	defer cancel()
	return g.Run(ctx, dir, extraEnv, secrets, args...)
}

var (
	userinfoRE = lazyre.New(`(?i)(https?://)[^/@\s]+@`)
	authHdrRE  = lazyre.New(`(?i)(authorization:\s*\w+\s+)\S+`)
)

// Redact removes credentials from text: URL user info, Authorization header values
// and each of the given secrets.
func Redact(s string, secrets []string) string {
	for _, sec := range secrets {
		if len(sec) >= 4 {
			s = strings.ReplaceAll(s, sec, "***")
		}
	}
	s = userinfoRE.ReplaceAllString(s, "${1}***@")
	return authHdrRE.ReplaceAllString(s, "${1}***")
}

func redactArgs(args, secrets []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = Redact(a, secrets)
	}
	return out
}

// credentialRequiredRE recognises a failure that credentials could fix.
var credentialRequiredRE = lazyre.New(`(?i)could not read (?:username|password)|terminal prompts disabled|authentication failed|(?:error|status|http)[: ]+40[13]\b|repository not found|requested url returned error: 40[13]`)

// needsCredentials reports whether err looks like an authentication failure.
func needsCredentials(err error) bool {
	var ge *GitError
	return errors.As(err, &ge) && credentialRequiredRE.MatchString(ge.Stderr)
}

// unadvertisedRE recognises a server that refuses to serve a commit by id.
var unadvertisedRE = lazyre.New(`(?i)not our ref|unadvertised object|couldn't find remote ref|no such remote ref|upload-pack: not our ref|want .* not valid|bad object`)
