package cli_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/hermes-go/hermes/internal/cli"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"hermes":   func() { os.Exit(cli.Main()) },
		"teafloor": teaFloor,
	})
}

// TestScripts runs the CLI end to end from testdata/script/*.txtar, in-process, with
// a private HOME and HERMES_HOME per script.
//
// Besides HOME and HERMES_HOME a script sees REPO (the module root, to copy the
// shipped examples from) and the Go build cache and module cache of the machine, so
// `go build` of an example plugin is fast and never touches the network.
func TestScripts(t *testing.T) {
	realHome, _ := os.UserHomeDir()
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	goEnv := goEnvironment()
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("HOME", env.WorkDir)
			env.Setenv("HERMES_HOME", filepath.Join(env.WorkDir, ".hermes"))
			env.Setenv("REPO", repo)
			// No script may reach the real catalog or index: fetches are off unless a
			// script clears this and points plugins.*_url at a loopback server.
			env.Setenv("HERMES_OFFLINE", "1")
			// pyenv's python3 shim finds its versions through PYENV_ROOT or $HOME.
			if root := os.Getenv("PYENV_ROOT"); root != "" {
				env.Setenv("PYENV_ROOT", root)
			} else if realHome != "" {
				env.Setenv("PYENV_ROOT", filepath.Join(realHome, ".pyenv"))
			}
			// A call that goes unanswered leaves a stall report (stderr, and the
			// directory scripts/test.sh prints when a run fails).
			env.Setenv("HERMES_DEBUG_STALL", "1")
			for _, k := range []string{"HERMES_PYTHON", "PYENV_VERSION", "HERMES_DEBUG_STALL"} {
				if v := os.Getenv(k); v != "" {
					env.Setenv(k, v)
				}
			}
			for k, v := range goEnv {
				env.Setenv(k, v)
			}
			return nil
		},
		Cmds:      scriptCmds,
		Condition: scriptCondition,
	})
}

// scriptCmds are the custom testscript commands; other _test.go files of this package
// add theirs from init (package variables are set before any init runs).
var scriptCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	"perm": cmdPerm,
}

// goEnvironment is what `go build` inside a script needs from the real machine: its
// caches (a cold cache would rebuild the standard library) and no network.
func goEnvironment() map[string]string {
	out := map[string]string{"GOPROXY": "off", "GOFLAGS": "-buildvcs=false"}
	b, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE").Output()
	if err != nil {
		return out
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) == 2 {
		out["GOCACHE"], out["GOMODCACHE"] = lines[0], lines[1]
	}
	return out
}

// cmdPerm checks a file's permission bits: perm 0600 path.
func cmdPerm(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: perm MODE FILE")
	}
	want, err := strconv.ParseUint(args[0], 8, 32)
	if err != nil {
		ts.Fatalf("perm: bad mode %q: %v", args[0], err)
	}
	st, err := os.Stat(ts.MkAbs(args[1]))
	ts.Check(err)
	got := st.Mode().Perm()
	if (uint64(got) == want) == neg {
		ts.Fatalf("perm %s: mode is %#o, want %s%#o", args[1], got, map[bool]string{true: "not ", false: ""}[neg], want)
	}
	fmt.Fprintf(ts.Stdout(), "%s: %#o\n", args[1], got)
}
