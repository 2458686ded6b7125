package plugins

import (
	"context"
	"fmt"
	"sync"

	"github.com/hermes-go/hermes/pkg/pluginsdk"
)

// builtinState is what an in-process plugin needs beyond its registrations.
type builtinState struct {
	mu     sync.Mutex
	unload []func()
}

func (m *Manager) builtinFor(key string) pluginsdk.Plugin {
	for _, b := range m.opts.Builtins {
		if b.Manifest != nil && b.Key() == key {
			return b.Plugin
		}
	}
	return nil
}

// startBuiltin runs a compiled-in plugin's Register in-process.
func (m *Manager) startBuiltin(ctx context.Context, p *Plugin) (err error) {
	impl := m.builtinFor(p.Key)
	if impl == nil {
		return fmt.Errorf("compiled-in plugin %s has no implementation", p.Key)
	}
	p.mu.Lock()
	p.builtin = &builtinState{}
	st := p.builtin
	p.mu.Unlock()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("register panicked: %v", r)
		}
	}()
	return impl.Register(p.session.LocalContext(m.opts.Home.Profile, func(fn func()) {
		st.mu.Lock()
		st.unload = append(st.unload, fn)
		st.mu.Unlock()
	}))
}

func (m *Manager) runBuiltinUnload() {
	for _, p := range m.Plugins() {
		p.mu.Lock()
		st := p.builtin
		p.mu.Unlock()
		if st == nil {
			continue
		}
		st.mu.Lock()
		fns := st.unload
		st.unload = nil
		st.mu.Unlock()
		for i := len(fns) - 1; i >= 0; i-- {
			func() {
				defer func() { _ = recover() }()
				fns[i]()
			}()
		}
	}
}
