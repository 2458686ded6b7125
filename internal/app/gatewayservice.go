package app

import (
	"context"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"time"

	"github.com/hermes-go/hermes/internal/gateway/service"
)

// GatewayPIDPath is the file the running gateway holds locked.
func (f *Factory) GatewayPIDPath() (string, error) {
	h, err := f.Home()
	if err != nil {
		return "", err
	}
	return filepath.Join(h.Dir, "gateway.pid"), nil
}

// AcquireGateway makes this process the HERMES_HOME's one gateway; with
// replace, a running one is asked to drain and stop first (killed after
// wait). release gives it up.
func (f *Factory) AcquireGateway(ctx context.Context, replace bool, wait time.Duration) (release func(), err error) {
	path, err := f.GatewayPIDPath()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	p, err := service.Acquire(ctx, path, replace, wait)
	if err != nil {
		return nil, Failf("Error: %v", err)
	}
	return p.Release, nil
}

// GatewayPID is the running gateway's pid, 0 when none runs.
func (f *Factory) GatewayPID() (int, error) {
	path, err := f.GatewayPIDPath()
	if err != nil {
		return 0, err
	}
	return service.Running(path)
}

// GatewayService is the systemd unit of this HERMES_HOME's gateway.
type GatewayService struct {
	Unit      service.Unit
	ConfigDir string // the user's config directory (~/.config)
	Systemctl service.Systemctl
}

// GatewayService describes the unit: the running hermes binary, this home
// and profile; a system unit runs as the invoking user (SUDO_USER under sudo).
func (f *Factory) GatewayService(system bool) (*GatewayService, error) {
	h, err := f.Home()
	if err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding the hermes binary: %w", err)
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	u := service.Unit{Exe: exe, Home: h.Dir, Default: h.Profile == "default" && f.Env(EnvHomeVar) == "",
		System: system, Path: f.Env("PATH"), DrainSeconds: 60}
	if f.Profile != "" && f.Profile != "default" {
		u.Profile = f.Profile
	}
	if system {
		u.User = f.Env("SUDO_USER")
		if u.User == "" {
			if cur, err := user.Current(); err == nil {
				u.User = cur.Username
			}
		}
	}
	configDir := f.Env("XDG_CONFIG_HOME")
	if configDir == "" {
		configDir = filepath.Join(f.Env("HOME"), ".config")
	}
	return &GatewayService{Unit: u, ConfigDir: configDir, Systemctl: service.FindSystemctl(f.Env("PATH"), system)}, nil
}

// EnvHomeVar is the variable naming a custom HERMES_HOME.
const EnvHomeVar = "HERMES_HOME"

// Install writes the unit and, when systemd is here, reloads it and enables it.
func (s *GatewayService) Install(ctx context.Context, force bool) (path string, changed bool, err error) {
	path, changed, err = s.Unit.Install(s.ConfigDir, force)
	if err != nil {
		return path, changed, Failf("Error: %v", err)
	}
	if s.Systemctl.Path == "" {
		return path, changed, nil
	}
	if _, err := s.Systemctl.Run(ctx, "daemon-reload"); err != nil {
		return path, changed, Failf("Error: %v", err)
	}
	if _, err := s.Systemctl.Run(ctx, "enable", s.Unit.Name()); err != nil {
		return path, changed, Failf("Error: %v", err)
	}
	return path, changed, nil
}

// Control runs systemctl verb on the unit (start, stop, restart, is-active).
func (s *GatewayService) Control(ctx context.Context, verb string) (string, error) {
	out, err := s.Systemctl.Run(ctx, verb, s.Unit.Name())
	if err != nil {
		return out, Failf("Error: %v", err)
	}
	return out, nil
}
