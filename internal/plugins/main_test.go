package plugins

import (
	"testing"

	"github.com/hermes-go/hermes/internal/tools"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// pipeline is the tool pipeline over what m's plugins registered, nobody to approve.
func (m *Manager) pipeline() *tools.Pipeline {
	return &tools.Pipeline{Registry: m.reg.Tools(), Hooks: m.reg.Hooks(), Middleware: m.reg.ToolMiddleware()}
}
