package plugins

import (
	"context"
	"path/filepath"
	"sync"

	"github.com/hermes-go/hermes/internal/plugins/runtime"
)

// bridgeChecked holds one sync.Once per (bridge directory, interpreter) this process
// has made sure has bytecode, so concurrent plugin starts check it once and wait for
// that check instead of each compiling the bridge from source.
var bridgeChecked sync.Map

// ensureBridgeBytecode precompiles the unpacked bridge for py when the plugin
// environment keeps Python from caching bytecode itself (see runtime.PrecompileBridge).
// Best effort: a failure only costs start-up time, so it is logged, not returned.
func (m *Manager) ensureBridgeBytecode(ctx context.Context, py *runtime.PythonInfo, script string) {
	dir := filepath.Dir(script)
	once, _ := bridgeChecked.LoadOrStore(dir+"\x00"+py.Executable+"\x00"+py.CacheTag, new(sync.Once))
	once.(*sync.Once).Do(func() {
		compiled, err := runtime.PrecompileBridge(ctx, *py, dir, m.pluginEnv())
		switch {
		case err != nil:
			m.log.Debug("python bridge bytecode not written", "error", err)
		case compiled:
			m.log.Debug("python bridge bytecode written", "dir", dir, "interpreter", py.Executable)
		}
	})
}
