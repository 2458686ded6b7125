package cli_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/hermes-go/hermes/internal/cli"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"hermes": func() { os.Exit(cli.Main()) },
	})
}

// TestScripts runs the CLI end to end from testdata/script/*.txtar, in-process, with
// a private HOME and HERMES_HOME per script.
func TestScripts(t *testing.T) {
	realHome, _ := os.UserHomeDir()
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("HOME", env.WorkDir)
			env.Setenv("HERMES_HOME", filepath.Join(env.WorkDir, ".hermes"))
			// pyenv's python3 shim finds its versions through PYENV_ROOT or $HOME.
			if root := os.Getenv("PYENV_ROOT"); root != "" {
				env.Setenv("PYENV_ROOT", root)
			} else if realHome != "" {
				env.Setenv("PYENV_ROOT", filepath.Join(realHome, ".pyenv"))
			}
			for _, k := range []string{"HERMES_PYTHON", "PYENV_VERSION"} {
				if v := os.Getenv(k); v != "" {
					env.Setenv(k, v)
				}
			}
			return nil
		},
	})
}
