// Package service makes `hermes gateway` a systemd service: the unit's text
// (upstream's hermes-gateway unit: KillMode=mixed, SIGTERM, Restart=always),
// where it goes, and systemctl for install/start/stop/restart/status.
package service

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Exit codes the unit knows (upstream's gateway/restart.py).
const (
	ExitRestart     = 75 // restart me
	ExitFatalConfig = 78 // do not restart: the configuration cannot run
)

// Unit describes one gateway service.
type Unit struct {
	Exe     string // the hermes binary
	Home    string // HERMES_HOME
	Default bool   // Home is the default ~/.hermes
	Profile string // --profile, "" for none
	System  bool   // a system unit (runs as User) rather than the user's
	User    string // for a system unit
	Path    string // PATH for the service (plugins' interpreters)
	// DrainSeconds is how long a stop may take: the gateway's drain timeout;
	// systemd waits a little longer before it kills.
	DrainSeconds int
}

// Name is the unit's name: hermes-gateway for the default home, else
// hermes-gateway-<hash> so two homes' gateways never share a unit.
func (u Unit) Name() string {
	if u.Default && u.Profile == "" {
		return "hermes-gateway"
	}
	sum := sha256.Sum256([]byte(u.Home + "\x00" + u.Profile))
	return "hermes-gateway-" + hex.EncodeToString(sum[:])[:8]
}

// Path is where the unit file goes: ~/.config/systemd/user/ for a user unit
// (configDir is the user's config directory), /etc/systemd/system/ for a
// system one.
func (u Unit) FilePath(configDir string) string {
	if u.System {
		return filepath.Join("/etc/systemd/system", u.Name()+".service")
	}
	return filepath.Join(configDir, "systemd", "user", u.Name()+".service")
}

// quote quotes a value for a systemd unit line.
func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "%", "%%", "\n", " ").Replace(s) + `"`
}

// Text is the unit file. Restart=always brings the gateway back after a
// crash or an exit 75; exit 78 (a configuration it cannot run) is not
// restarted, so a typo does not loop every 10 s.
func (u Unit) Text() (string, error) {
	if u.Exe == "" || !filepath.IsAbs(u.Exe) {
		return "", fmt.Errorf("the hermes binary %q is not an absolute path", u.Exe)
	}
	if u.System && u.User == "" {
		return "", errors.New("a system unit needs the user to run as")
	}
	drain := u.DrainSeconds
	if drain <= 0 {
		drain = 60
	}
	var b strings.Builder
	w := func(s string) { b.WriteString(s + "\n") }
	w("[Unit]")
	w("Description=Hermes Agent Gateway - Messaging Platform Integration")
	w("After=network-online.target")
	w("Wants=network-online.target")
	w("")
	w("[Service]")
	w("Type=simple")
	exec := quote(u.Exe)
	if u.Profile != "" {
		exec += " --profile " + quote(u.Profile)
	}
	w("ExecStart=" + exec + " gateway run --replace")
	if u.System {
		w("User=" + u.User)
	}
	w("Environment=" + quote("HERMES_HOME="+u.Home))
	if u.Path != "" {
		w("Environment=" + quote("PATH="+u.Path))
	}
	w("WorkingDirectory=" + quote(u.Home))
	w("Restart=always")
	w("RestartSec=10")
	w(fmt.Sprintf("RestartPreventExitStatus=%d", ExitFatalConfig))
	w("KillMode=mixed")
	w("KillSignal=SIGTERM")
	w(fmt.Sprintf("TimeoutStopSec=%d", drain+30))
	w("")
	w("[Install]")
	if u.System {
		w("WantedBy=multi-user.target")
	} else {
		w("WantedBy=default.target")
	}
	return b.String(), nil
}

// Install writes the unit file (0644, its directory made). An existing file
// with other content is kept unless force.
func (u Unit) Install(configDir string, force bool) (path string, changed bool, err error) {
	text, err := u.Text()
	if err != nil {
		return "", false, err
	}
	path = u.FilePath(configDir)
	old, err := os.ReadFile(path)
	switch {
	case err == nil && string(old) == text:
		return path, false, nil
	case err == nil && !force:
		return path, false, fmt.Errorf("%s exists with other content: run hermes gateway install --force to replace it", path)
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return path, false, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return path, false, fmt.Errorf("writing the unit: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
		return path, false, fmt.Errorf("writing the unit: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return path, false, fmt.Errorf("writing the unit: %w", err)
	}
	return path, true, nil
}

// Systemctl drives units; Path "" means systemd is not here.
type Systemctl struct {
	Path   string
	System bool
}

// FindSystemctl looks for systemctl on pathEnv.
func FindSystemctl(pathEnv string, system bool) Systemctl {
	for _, dir := range filepath.SplitList(pathEnv) {
		p := filepath.Join(dir, "systemctl")
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return Systemctl{Path: p, System: system}
		}
	}
	return Systemctl{System: system}
}

// ErrNoSystemd is Run's error when systemctl is not on PATH.
var ErrNoSystemd = errors.New("systemctl is not on PATH: systemd is not available here; run the gateway in the foreground with hermes gateway run")

// Run runs `systemctl [--user] args...` and returns its output.
func (s Systemctl) Run(ctx context.Context, args ...string) (string, error) {
	if s.Path == "" {
		return "", ErrNoSystemd
	}
	if !s.System {
		args = append([]string{"--user"}, args...)
	}
	cmd := exec.CommandContext(ctx, s.Path, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	text := strings.TrimSpace(out.String())
	if err != nil {
		if text != "" {
			return text, fmt.Errorf("systemctl %s: %w: %s", strings.Join(args, " "), err, text)
		}
		return text, fmt.Errorf("systemctl %s: %w", strings.Join(args, " "), err)
	}
	return text, nil
}
