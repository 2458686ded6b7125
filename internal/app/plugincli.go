package app

import (
	"context"

	"github.com/hermes-go/hermes/internal/plugins/hostapi"
	"github.com/hermes-go/hermes/internal/plugins/registry"
)

// RunCLICommand runs the plugin CLI command c (`hermes <name> args...`) on
// hermes' terminal: the plugin's own stdin is /dev/null, so its input() and
// getpass() read hermes' stdin through the host, getpass with the echo off.
// It returns the command's exit code.
func (h *Host) RunCLICommand(ctx context.Context, c *registry.CLICommand, args []string) (int, error) {
	s := h.f.IO
	return c.Run(hostapi.WithCLIStdin(ctx, s.In, EchoOff(s.In)), args, s.Out, s.Err)
}
