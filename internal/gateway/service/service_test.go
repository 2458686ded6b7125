package service

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestUnitText(t *testing.T) {
	user := Unit{Exe: "/usr/bin/hermes", Home: "/home/ann/.hermes", Default: true, Path: "/usr/bin:/bin", DrainSeconds: 60}
	text, err := user.Text()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		`ExecStart="/usr/bin/hermes" gateway run --replace`,
		`Environment="HERMES_HOME=/home/ann/.hermes"`,
		`Environment="PATH=/usr/bin:/bin"`,
		"Restart=always", "KillMode=mixed", "KillSignal=SIGTERM", "RestartPreventExitStatus=78", "TimeoutStopSec=90",
		"WantedBy=default.target",
	} {
		if !strings.Contains(text, "\n"+line+"\n") {
			t.Errorf("user unit lacks %q:\n%s", line, text)
		}
	}
	if strings.Contains(text, "User=") {
		t.Error("a user unit names a User")
	}

	sys := Unit{Exe: "/opt/hermes bin/hermes", Home: "/srv/h%1", Profile: "coder", System: true, User: "ann"}
	text, err = sys.Text()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{`ExecStart="/opt/hermes bin/hermes" --profile "coder" gateway run --replace`, "User=ann",
		`Environment="HERMES_HOME=/srv/h%%1"`, "WantedBy=multi-user.target"} {
		if !strings.Contains(text, "\n"+line+"\n") {
			t.Errorf("system unit lacks %q:\n%s", line, text)
		}
	}

	for _, tc := range []struct {
		name string
		u    Unit
		want string
	}{
		{"relative binary", Unit{Exe: "hermes", Home: "/h"}, "absolute"},
		{"system without a user", Unit{Exe: "/bin/hermes", Home: "/h", System: true}, "user to run as"},
	} {
		if _, err := tc.u.Text(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error about %q", tc.name, err, tc.want)
		}
	}
}

func TestUnitName(t *testing.T) {
	def := Unit{Home: "/home/a/.hermes", Default: true}
	other := Unit{Home: "/srv/hermes"}
	prof := Unit{Home: "/home/a/.hermes/profiles/x", Default: true, Profile: "x"}
	if def.Name() != "hermes-gateway" {
		t.Errorf("default home: %s", def.Name())
	}
	if n := other.Name(); !strings.HasPrefix(n, "hermes-gateway-") || len(n) != len("hermes-gateway-")+8 || n == prof.Name() {
		t.Errorf("names %s %s", n, prof.Name())
	}
	if other.Name() != (Unit{Home: "/srv/hermes"}).Name() {
		t.Error("the name is not stable")
	}
	if got := def.FilePath("/home/a/.config"); got != "/home/a/.config/systemd/user/hermes-gateway.service" {
		t.Errorf("user path %s", got)
	}
	if got := (Unit{System: true, Default: true}).FilePath("/x"); got != "/etc/systemd/system/hermes-gateway.service" {
		t.Errorf("system path %s", got)
	}
}

func TestInstall(t *testing.T) {
	dir := t.TempDir()
	u := Unit{Exe: "/usr/bin/hermes", Home: "/h", Default: true}
	path, changed, err := u.Install(dir, false)
	if err != nil || !changed {
		t.Fatalf("Install = %s, %v, %v", path, changed, err)
	}
	if _, changed, err := u.Install(dir, false); err != nil || changed {
		t.Fatalf("a second Install changed it: %v, %v", changed, err)
	}
	u.Exe = "/usr/local/bin/hermes"
	if _, _, err := u.Install(dir, false); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("a different unit was overwritten: %v", err)
	}
	if _, changed, err := u.Install(dir, true); err != nil || !changed {
		t.Fatalf("--force: %v, %v", changed, err)
	}
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), "/usr/local/bin/hermes") {
		t.Fatalf("unit %s", b)
	}
}

func TestSystemctl(t *testing.T) {
	if _, err := (Systemctl{}).Run(context.Background(), "start", "x"); !errors.Is(err, ErrNoSystemd) {
		t.Fatalf("no systemctl: %v", err)
	}
	// A systemctl of our own on PATH: records its arguments, fails on "fail".
	bin := t.TempDir()
	log := filepath.Join(bin, "args")
	script := "#!/bin/sh\necho \"$@\" >> " + log + "\n[ \"$2\" = fail ] && { echo 'Unit not found.' >&2; exit 5; }\nexit 0\n"
	if err := os.WriteFile(filepath.Join(bin, "systemctl"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	s := FindSystemctl("/nonexistent:"+bin, false)
	if s.Path == "" {
		t.Fatal("systemctl not found on PATH")
	}
	if _, err := s.Run(context.Background(), "start", "hermes-gateway"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(context.Background(), "fail", "x"); err == nil || !strings.Contains(err.Error(), "Unit not found.") {
		t.Fatalf("a failing systemctl: %v", err)
	}
	b, _ := os.ReadFile(log)
	if string(b) != "--user start hermes-gateway\n--user fail x\n" {
		t.Fatalf("systemctl got %q", b)
	}
}

func TestPIDFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gateway.pid")
	if pid, err := Running(path); err != nil || pid != 0 {
		t.Fatalf("no file: %d, %v", pid, err)
	}
	p, err := Acquire(context.Background(), path, false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if pid, _ := Running(path); pid != os.Getpid() {
		t.Fatalf("Running = %d, want this process", pid)
	}
	// flock locks belong to the open file: a second Acquire in this process
	// is refused too.
	var running *ErrRunning
	if _, err := Acquire(context.Background(), path, false, time.Second); !errors.As(err, &running) || running.PID != os.Getpid() {
		t.Fatalf("second Acquire = %v", err)
	}
	p.Release()
	if pid, _ := Running(path); pid != 0 {
		t.Fatalf("after Release: %d", pid)
	}
}

// --replace stops the other gateway: a real process holding the lock that
// exits on SIGTERM; one that ignores it is killed after the wait.
func TestAcquireReplace(t *testing.T) {
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("flock(1) not installed")
	}
	for _, tc := range []struct {
		name, script string
	}{
		{"drains on SIGTERM", "trap 'exit 0' TERM; while :; do sleep 0.05; done"},
		{"ignores SIGTERM", "trap '' TERM; while :; do sleep 0.05; done"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "gateway.pid")
			// The holder writes its own pid, as a gateway does, with the lock held on fd 9.
			cmd := exec.Command("sh", "-c", "exec 9>>"+path+"; flock -x 9; echo $$ > "+path+"; "+tc.script)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			for deadline := time.Now().Add(10 * time.Second); ; {
				if pid, _ := Running(path); pid == cmd.Process.Pid {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the holder never took the lock")
				}
				time.Sleep(10 * time.Millisecond)
			}
			var running *ErrRunning
			if _, err := Acquire(context.Background(), path, false, time.Second); !errors.As(err, &running) || running.PID != cmd.Process.Pid {
				t.Fatalf("Acquire without replace = %v", err)
			}
			p, err := Acquire(context.Background(), path, true, 300*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Release()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("the old holder still runs")
			}
			b, _ := os.ReadFile(path)
			if strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
				t.Fatalf("pid file %q", b)
			}
		})
	}
}
