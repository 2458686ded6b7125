//go:build !linux

package runtime

import (
	"context"
	"errors"

	"github.com/hermes-go/hermes/internal/reaper"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// ForkServer is only available on Linux; elsewhere every plugin starts its own
// interpreter.
type ForkServer struct{}

// StartForkServer reports that forking plugins is not supported here.
func StartForkServer(context.Context, *reaper.Reaper, string, string, []string, string, LineSink) (*ForkServer, error) {
	return nil, errors.New("the python fork server is only available on Linux")
}

// Alive is always false.
func (*ForkServer) Alive() bool { return false }

// Close does nothing.
func (*ForkServer) Close() {}

func startForked(context.Context, *ForkServer, Command, protocol.Handler, Options) (*Process, error) {
	return nil, errors.New("the python fork server is only available on Linux")
}
