package app

import (
	"os"

	"github.com/hermes-go/hermes/internal/clock"
	"github.com/hermes-go/hermes/internal/reaper"
	"github.com/mattn/go-isatty"
)

// New is the Factory of the real process: its terminal, environment and
// working directory. It is the one place hermes reads them from the OS.
func New(version string) *Factory {
	cwd, _ := os.Getwd()
	return &Factory{
		IO: &IOStreams{
			In: os.Stdin, Out: os.Stdout, Err: os.Stderr,
			InTTY:  isatty.IsTerminal(os.Stdin.Fd()),
			OutTTY: isatty.IsTerminal(os.Stdout.Fd()),
			ErrTTY: isatty.IsTerminal(os.Stderr.Fd()),
		},
		Env:     os.Getenv,
		Environ: os.Environ,
		Cwd:     cwd,
		Clock:   clock.Now,
		Version: version,
		// Costs nothing until the first process starts.
		procs:     reaper.New(reaper.Options{NoCgroups: Truthy(os.Getenv("HERMES_NO_CGROUPS"))}),
		ownsProcs: true,
	}
}
