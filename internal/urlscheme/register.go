package urlscheme

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Registration is what Register did.
type Registration struct {
	Dir   string // the applications directory
	Entry string // the desktop entry written there
	// Default: xdg-mime made the entry the handler of hermes:// links. False
	// with NoXDGMime when xdg-mime is not installed.
	Default   bool
	NoXDGMime bool
}

// DefaultError is a desktop entry written whose `xdg-mime default` failed.
type DefaultError struct {
	Args []string
	Err  error
}

func (e *DefaultError) Error() string {
	return fmt.Sprintf("the desktop entry is written, but `xdg-mime %s` failed: %v", strings.Join(e.Args, " "), e.Err)
}

func (e *DefaultError) Unwrap() error { return e.Err }

// Register makes the desktop open hermes:// links with exe: it writes the
// desktop entry into the user's applications directory, refreshes the
// desktop database when update-desktop-database exists, and sets the default
// handler with xdg-mime when it exists. getenv is the user's environment
// (where the directory is, and what the desktop tools need to find the
// session); the tools are looked up on its PATH, not hermes' own.
func Register(ctx context.Context, getenv func(string) string, exe string) (Registration, error) {
	var r Registration
	dir, err := ApplicationsDir(getenv)
	if err != nil {
		return r, err
	}
	r.Dir = dir
	if r.Entry, err = WriteDesktopEntry(dir, exe); err != nil {
		return r, err
	}
	env := desktopEnv(getenv)
	if tool := lookPathIn("update-desktop-database", getenv("PATH")); tool != "" {
		_ = runTool(ctx, env, tool, "-q", dir) // best effort: only refreshes a cache
	}
	tool := lookPathIn("xdg-mime", getenv("PATH"))
	if tool == "" {
		r.NoXDGMime = true
		return r, nil
	}
	args := append([]string{"default", DesktopFile}, MimeTypes...)
	if err := runTool(ctx, env, tool, args...); err != nil {
		return r, &DefaultError{Args: args, Err: err}
	}
	r.Default = true
	return r, nil
}

// desktopEnv passes a desktop tool what it needs to find the user's session.
func desktopEnv(getenv func(string) string) []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "XDG_DATA_HOME", "XDG_DATA_DIRS", "XDG_CONFIG_HOME", "XDG_CONFIG_DIRS", "XDG_CURRENT_DESKTOP", "XDG_RUNTIME_DIR", "DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "KDE_SESSION_VERSION", "DESKTOP_SESSION"} {
		if v := getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

func runTool(ctx context.Context, env []string, tool string, args ...string) error {
	cmd := exec.CommandContext(ctx, tool, args...)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		if s := strings.TrimSpace(out.String()); s != "" {
			return fmt.Errorf("%w: %s", err, s)
		}
		return err
	}
	return nil
}

// lookPathIn finds an executable on the given PATH.
func lookPathIn(name, pathEnv string) string {
	for _, dir := range filepath.SplitList(pathEnv) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}
