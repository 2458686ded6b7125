package cli

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/testutil/procs"
	"github.com/hermes-go/hermes/internal/testutil/pty"
	"github.com/hermes-go/hermes/internal/testutil/syncbuf"
)

// Ctrl-C typed on a real terminal: hermes runs in a new session whose
// controlling terminal is a pseudo-terminal, started by a shell as a script would
// start it (the shell leads the session and stays, as a user's shell does), so
// the line discipline turns a typed ^C into a SIGINT for the foreground process
// group: the shell, hermes and whatever hermes left in its group.

// onTerminal is one hermes process on a pseudo-terminal.
type onTerminal struct {
	t      *testing.T
	master *os.File
	tty    *os.File
	cmd    *exec.Cmd
	out    syncbuf.Buffer // everything the terminal showed
	done   chan struct{}
}

// guard bounds every wait of these tests; nothing here should take a fraction of it.
const guard = 60 * time.Second

// startOnTerminal runs `hermes args...` with env on a new pseudo-terminal.
func startOnTerminal(t *testing.T, env []string, args ...string) *onTerminal {
	t.Helper()
	bin, err := exec.LookPath("hermes")
	if err != nil {
		t.Fatalf("hermes is not on PATH (TestMain puts it there): %v", err)
	}
	master, tty := pty.Open(t)
	p := &onTerminal{t: t, master: master, tty: tty, done: make(chan struct{})}
	// The shell's trap runs a command, so hermes starts with SIGINT's default
	// disposition (an ignored signal would be inherited).
	p.cmd = exec.Command("/bin/sh", append([]string{"-c", `trap : INT; "$0" "$@"; echo "[hermes exit $?]"; exec sleep 600`, bin}, args...)...)
	p.cmd.Env = env
	p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = tty, tty, tty
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			p.out.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
	go func() {
		_ = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill() // the session ends: the terminal hangs up on the rest
		<-p.done
	})
	return p
}

// waitFor waits until the terminal has shown s.
func (p *onTerminal) waitFor(s string) {
	p.t.Helper()
	deadline := time.Now().Add(guard)
	for !strings.Contains(p.out.String(), s) {
		select {
		case <-p.done:
			p.t.Fatalf("the shell ended before showing %q; the terminal showed:\n%s", s, p.out.String())
		default:
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("the terminal never showed %q; it showed:\n%s", s, p.out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// ctrlC types ^C.
func (p *onTerminal) ctrlC() {
	p.t.Helper()
	if _, err := p.master.Write([]byte{0x03}); err != nil {
		p.t.Fatal(err)
	}
}

var exitRE = regexp.MustCompile(`\[hermes exit (\d+)\]`)

// exitCode waits for hermes to end and returns its exit code as the shell saw it
// (128+n: killed by signal n). One ^C must end it: a prompt that swallowed the
// interrupt would still be waiting at the guard.
func (p *onTerminal) exitCode() int {
	p.t.Helper()
	deadline := time.Now().Add(guard)
	for {
		if m := exitRE.FindStringSubmatch(p.out.String()); m != nil {
			n, _ := strconv.Atoi(m[1])
			return n
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("hermes did not end after one Ctrl-C; the terminal showed:\n%s", p.out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// termEnv is the environment of a hermes run with its own HOME and HERMES_HOME.
func termEnv(home string, extra ...string) []string {
	env := []string{"HOME=" + home, "HERMES_HOME=" + filepath.Join(home, ".hermes"), "PATH=" + os.Getenv("PATH"), "HERMES_OFFLINE=1", "TERM=dumb"}
	for _, k := range []string{"HERMES_PYTHON", "PYENV_ROOT", "PYENV_VERSION"} {
		if v := os.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return append(env, extra...)
}

// noStaging fails if an install left a staging folder in the plugins directory.
func noStaging(t *testing.T, hh string) {
	t.Helper()
	entries, _ := os.ReadDir(filepath.Join(hh, "plugins"))
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".install-") || strings.HasPrefix(e.Name(), ".remove-") {
			t.Errorf("staging folder %s left behind", e.Name())
		}
	}
}

func readConfig(t *testing.T, hh string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(hh, "config.yaml"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return string(b)
}

// TestCtrlCAtAPromptIsNo: the first Ctrl-C at any y/N prompt (and at a
// requires_env value, or while `chat -q -` reads) is a no that ends the command: exit 130, "interrupted",
// nothing the prompt would have changed is changed, the terminal's echo is on.
// Before, the first Ctrl-C only cancelled a context nobody at the prompt watched:
// the prompt went on waiting.
func TestCtrlCAtAPromptIsNo(t *testing.T) {
	clean := makePluginRepo(t, map[string]string{"plugin.yaml": "name: plain\n", "__init__.py": "def register(ctx):\n    pass\n"})
	careful := makePluginRepo(t, map[string]string{"plugin.yaml": "name: careful\n", "__init__.py": "import os\n\n\ndef register(ctx):\n    os.system('ls')\n"})
	capper := makePluginRepo(t, map[string]string{"plugin.yaml": capperFiles, "__init__.py": "def register(ctx):\n    pass\n"})
	tests := []struct {
		name   string
		before [][]string // commands run first, without a terminal
		args   []string
		prompt string
		check  func(t *testing.T, hh, shown string)
	}{
		{
			name: "caution scan", args: []string{"plugins", "install", careful, "--no-enable"},
			prompt: "Install anyway? Only continue if you trust the source. [y/N]: ",
			check: func(t *testing.T, hh, shown string) {
				if _, err := os.Stat(filepath.Join(hh, "plugins", "careful")); err == nil {
					t.Error("installed after Ctrl-C")
				}
				if !strings.Contains(shown, "interrupted: nothing was installed.") {
					t.Errorf("the terminal showed:\n%s", shown)
				}
				noStaging(t, hh)
			},
		},
		{
			name: "enable after install", args: []string{"plugins", "install", clean},
			prompt: "Enable 'plain' now? [y/N]: ",
			check: func(t *testing.T, hh, shown string) {
				if _, err := os.Stat(filepath.Join(hh, "plugins", "plain", "plugin.yaml")); err != nil {
					t.Errorf("the install itself, done before the question, is gone: %v", err)
				}
				if strings.Contains(readConfig(t, hh), "plain") {
					t.Errorf("enabled after Ctrl-C:\n%s", readConfig(t, hh))
				}
			},
		},
		{
			name: "requires_env secret", args: []string{"plugins", "install", capper},
			prompt: "CAPPER_API_KEY: ",
			check: func(t *testing.T, hh, shown string) {
				if _, err := os.Stat(filepath.Join(hh, ".env")); err == nil {
					t.Error(".env written after Ctrl-C")
				}
				if strings.Contains(shown, "Enable 'capper' now?") {
					t.Errorf("asked on after Ctrl-C:\n%s", shown)
				}
			},
		},
		{
			name:   "capability consent",
			before: [][]string{{"plugins", "install", capper, "--no-enable", "--skip-env"}},
			args:   []string{"plugins", "enable", "capper"}, prompt: "Grant these capabilities? [y/N] ",
			check: func(t *testing.T, hh, shown string) {
				if cfg := readConfig(t, hh); strings.Contains(cfg, "granted_capabilities") || strings.Contains(cfg, "capabilities_consent") {
					t.Errorf("consent recorded after Ctrl-C:\n%s", cfg)
				}
			},
		},
		{
			name:   "tool override",
			before: [][]string{{"plugins", "install", clean, "--no-enable"}},
			args:   []string{"plugins", "enable", "plain"}, prompt: "Grant it? [y/N] ",
			check: func(t *testing.T, hh, shown string) {
				if cfg := readConfig(t, hh); strings.Contains(cfg, "allow_tool_override") {
					t.Errorf("the no was written after Ctrl-C:\n%s", cfg)
				}
			},
		},
		{
			name: "pack", args: []string{"plugins", "pack", "install", "PACK"},
			prompt: "Install 1 plugin(s) from pack 'team'? [y/N] ",
			check: func(t *testing.T, hh, shown string) {
				if strings.Contains(shown, "Aborted") || strings.Contains(shown, "[1/1]") {
					t.Errorf("the terminal showed:\n%s", shown)
				}
				if _, err := os.Stat(filepath.Join(hh, "plugins", "repo")); err == nil {
					t.Error("installed after Ctrl-C")
				}
			},
		},
		{
			name: "open-url", args: []string{"open-url", "hermes://plugin/install?repo=owner/repo&enable=1"},
			prompt: "Install owner/repo? [y/N]: ",
			check: func(t *testing.T, hh, shown string) {
				if strings.Contains(shown, "Aborted") || strings.Contains(shown, "Cloning") {
					t.Errorf("the terminal showed:\n%s", shown)
				}
			},
		},
		{
			name: "chat -q - reading the terminal", args: []string{"chat", "-q", "-"},
			prompt: "end it with Ctrl-D.",
			check:  func(t *testing.T, hh, shown string) {},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			hh := filepath.Join(home, ".hermes")
			env := termEnv(home)
			packFile := filepath.Join(home, "pack.yaml")
			if err := os.WriteFile(packFile, []byte("name: team\nplugins:\n  - repo: owner/repo\n    ref: e905f3bc5eeaa5a9dab9bc5155601b3ebec75757\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, args := range tt.before {
				cmd := exec.Command("hermes", args...)
				cmd.Env = env
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("%v: %v\n%s", args, err, out)
				}
			}
			args := append([]string(nil), tt.args...)
			for i, a := range args {
				if a == "PACK" {
					args[i] = packFile
				}
			}
			p := startOnTerminal(t, env, args...)
			p.waitFor(tt.prompt)
			p.ctrlC()
			if code := p.exitCode(); code != 130 {
				t.Fatalf("exit code %d, want 130; the terminal showed:\n%s", code, p.out.String())
			}
			shown := p.out.String()
			if !strings.Contains(shown, "interrupted") {
				t.Errorf("no \"interrupted\"; the terminal showed:\n%s", shown)
			}
			if !pty.Echoes(t, p.tty) {
				t.Error("the terminal's echo was left off")
			}
			tt.check(t, hh, shown)
		})
	}
}

// fakeSSH writes an ssh stand-in for GIT_SSH_COMMAND (which hermes passes to
// git) into dir and returns its path. It runs the remote git
// command locally; once the file hang exists, it starts a shell that ignores
// SIGINT and never ends instead (a stalled server; marker is in its arguments),
// records that it started and waits for it.
func fakeSSH(t *testing.T, dir, marker string) (path, hang, started string) {
	t.Helper()
	path = filepath.Join(dir, "fake-ssh")
	hang, started = filepath.Join(dir, "hang"), filepath.Join(dir, "started")
	script := `#!/bin/sh
# git probes the ssh variant with -G first
case "$1" in -G) exit 0;; esac
if [ -e '` + hang + `' ]; then
	trap '' INT
	sh -c 'trap "" INT; while :; do sleep 1; done' ` + marker + ` &
	: > '` + started + `'
	wait
	exit 1
fi
for last; do :; done
exec sh -c "git ${last#git-}"
`
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path, hang, started
}

func waitFile(t *testing.T, p *onTerminal, path string) {
	t.Helper()
	deadline := time.Now().Add(guard)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		select {
		case <-p.done:
			t.Fatalf("hermes ended before %s appeared; the terminal showed:\n%s", path, p.out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared; the terminal showed:\n%s", path, p.out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestCtrlCDuringInstall: Ctrl-C while git fetches kills git and everything it
// started (here an ssh stand-in that ignores SIGINT), removes the staging folder,
// says "interrupted" and exits 130. Before, git alone was killed (or died of the
// terminal's SIGINT); its helpers lived on holding its pipes, and the install
// failed as an ordinary git error, exit 1.
func TestCtrlCDuringInstall(t *testing.T) {
	home := t.TempDir()
	hh := filepath.Join(home, ".hermes")
	marker := procs.NewMarker()
	ssh, hang, started := fakeSSH(t, t.TempDir(), marker)
	if err := os.WriteFile(hang, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	repo := strings.TrimPrefix(makePluginRepo(t, map[string]string{"plugin.yaml": "name: slow\n", "__init__.py": "def register(ctx):\n    pass\n"}), "file://")
	p := startOnTerminal(t, termEnv(home, "GIT_SSH_COMMAND="+ssh), "plugins", "install", "ssh://localhost"+repo, "--no-enable")
	waitFile(t, p, started)
	p.ctrlC()
	if code := p.exitCode(); code != 130 {
		t.Fatalf("exit code %d, want 130; the terminal showed:\n%s", code, p.out.String())
	}
	if shown := p.out.String(); !strings.Contains(shown, "interrupted: nothing was installed.") || strings.Contains(shown, "Git clone failed") {
		t.Errorf("the terminal showed:\n%s", shown)
	}
	procs.NoneMarked(t, marker, 10*time.Second)
	noStaging(t, hh)
	if _, err := os.Stat(filepath.Join(hh, "plugins", "slow")); err == nil {
		t.Error("installed after Ctrl-C")
	}
}

// TestCtrlCDuringUpdate: Ctrl-C while git pulls kills git's group, leaves the
// checkout at its commit with the user's local edits back in place (they were
// stashed for the pull), exits 130 and says so.
func TestCtrlCDuringUpdate(t *testing.T) {
	home := t.TempDir()
	hh := filepath.Join(home, ".hermes")
	marker := procs.NewMarker()
	ssh, hang, started := fakeSSH(t, t.TempDir(), marker)
	url := makePluginRepo(t, map[string]string{"plugin.yaml": "name: upd\n", "__init__.py": "def register(ctx):\n    pass\n"})
	env := termEnv(home, "GIT_SSH_COMMAND="+ssh)
	install := exec.Command("hermes", "plugins", "install", "ssh://localhost"+strings.TrimPrefix(url, "file://"), "--no-enable")
	install.Env = env
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	dir := filepath.Join(hh, "plugins", "upd")
	git := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	before := git("rev-parse", "HEAD")
	if err := os.WriteFile(filepath.Join(dir, "__init__.py"), []byte("# my edit\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hang, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	p := startOnTerminal(t, env, "plugins", "update", "upd")
	waitFile(t, p, started)
	p.ctrlC()
	if code := p.exitCode(); code != 130 {
		t.Fatalf("exit code %d, want 130; the terminal showed:\n%s", code, p.out.String())
	}
	if shown := p.out.String(); !strings.Contains(shown, "interrupted: the plugin was not updated. Local changes were restored.") {
		t.Errorf("the terminal showed:\n%s", shown)
	}
	procs.NoneMarked(t, marker, 10*time.Second)
	if got := git("rev-parse", "HEAD"); got != before {
		t.Errorf("HEAD moved to %s", got)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "__init__.py")); string(b) != "# my edit\n" {
		t.Errorf("the local edit is not back: %q", b)
	}
	if s := git("stash", "list"); s != "" {
		t.Errorf("stash left: %s", s)
	}
}
