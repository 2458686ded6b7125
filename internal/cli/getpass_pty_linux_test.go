package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hermes-go/hermes/internal/app"
	"github.com/hermes-go/hermes/internal/cli"
	"github.com/hermes-go/hermes/internal/testutil/pty"
	"github.com/hermes-go/hermes/internal/testutil/syncbuf"
)

// TestPluginCLIGetpassOnTerminal: a plugin CLI command's getpass() reads hermes'
// terminal with echo off (and on again after), shows its prompt, prints no
// "Can not control echo" warning, and never hangs on the terminal. Before, the
// plugin opened /dev/tty from a background process group and was stopped
// (SIGTTIN), hanging hermes with the secret echoed.
func TestPluginCLIGetpassOnTerminal(t *testing.T) {
	master, tty := pty.Open(t)
	home := filepath.Join(t.TempDir(), "hermes")
	dir := filepath.Join(home, "plugins", "gp")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("plugin.yaml", "name: gp\nversion: \"1.0\"\n")
	write("__init__.py", `from getpass import getpass


def _login(args):
    secret = getpass("Token: ")
    print("got %d chars" % len(secret))
    return 0


def register(ctx):
    ctx.register_cli_command(name="gp-login", help="log in", setup_fn=lambda p: None, handler_fn=_login)
`)
	env := func(k string) string {
		if k == "HERMES_HOME" {
			return home
		}
		return os.Getenv(k)
	}
	newApp := func(out, errOut *syncbuf.Buffer) *app.Factory {
		f := app.New(cli.Version)
		f.Env = env
		f.IO.In, f.IO.Out, f.IO.Err = tty, out, errOut
		return f
	}
	ctx := context.Background()
	var out, errOut syncbuf.Buffer
	if rc := cli.Run(ctx, newApp(&out, &errOut), []string{"plugins", "enable", "gp"}); rc != 0 {
		t.Fatalf("enable: rc %d: %s", rc, errOut.String())
	}
	if !pty.Echoes(t, tty) {
		t.Fatal("the new terminal should echo")
	}

	out, errOut = syncbuf.Buffer{}, syncbuf.Buffer{}
	done := make(chan int, 1)
	go func() { done <- cli.Run(ctx, newApp(&out, &errOut), []string{"gp-login"}) }()
	deadline := time.Now().Add(60 * time.Second)
	for pty.Echoes(t, tty) {
		select {
		case rc := <-done:
			t.Fatalf("gp-login ended (rc %d) before turning echo off; stderr: %s", rc, errOut.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("echo never turned off; stderr so far: %q", errOut.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := master.Write([]byte("s3cret\n")); err != nil {
		t.Fatal(err)
	}
	select {
	case rc := <-done:
		if rc != 0 {
			t.Fatalf("gp-login: rc %d; stderr: %s", rc, errOut.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("gp-login did not finish; stderr: %q", errOut.String())
	}
	if got := out.String(); got != "got 6 chars\n" {
		t.Errorf("stdout %q, want the secret's length", got)
	}
	if e := errOut.String(); !strings.HasPrefix(e, "Token: ") || strings.Contains(e, "echo") {
		t.Errorf("stderr %q: want the prompt and no echo warning", e)
	}
	if !pty.Echoes(t, tty) {
		t.Error("echo was not turned back on")
	}
	// What the terminal displayed: the secret must not be among it.
	if shown := available(t, master); strings.Contains(shown, "s3cret") {
		t.Errorf("the terminal echoed the secret: %q", shown)
	}
}

// available reads what f has to give now, waiting up to 300 ms for more each time.
func available(t *testing.T, f *os.File) string {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var b []byte
	buf := make([]byte, 4096)
	for {
		var n int
		var rerr error
		_ = rc.Control(func(fd uintptr) {
			pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			if k, err := unix.Poll(pfd, 300); err != nil || k == 0 {
				rerr = unix.EAGAIN
				return
			}
			n, rerr = unix.Read(int(fd), buf)
		})
		if n > 0 {
			b = append(b, buf[:n]...)
		}
		if rerr != nil || n == 0 {
			return string(b)
		}
	}
}
