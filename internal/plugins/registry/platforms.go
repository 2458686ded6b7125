package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/hermes-go/hermes/pkg/protocol"
)

// PlatformEntry is one ctx.register_platform (wave2 §2.10): what the gateway
// reads of it, and the connection to the plugin process its adapter lives in.
type PlatformEntry struct {
	Name    string // the platforms.<name> config id, lower-case
	Label   string
	Plugin  string // the registering plugin's key
	Details PlatformDetails
	// Check is the entry's passive check_fn; nil when it gave none.
	Check func(ctx context.Context) (bool, error)
	Conn  PlatformConn
}

// PlatformDetails are the entry's fields the host uses.
type PlatformDetails struct {
	RequiredEnv      []string
	InstallHint      string
	AllowedUsersEnv  string
	AllowAllEnv      string
	MaxMessageLength int
	Emoji            string
	PlatformHint     string
}

// PlatformConn calls the plugin process that holds a platform's adapter.
type PlatformConn interface {
	Call(ctx context.Context, method string, params any) (json.RawMessage, error)
	// Exited is closed when the plugin's current process ends (at once when
	// none runs, as while it restarts).
	Exited() <-chan struct{}
}

// PlatformReceiver takes what a platform's adapter tells the host: its
// messages (handle_message) and its connection changes.
type PlatformReceiver struct {
	Event  func(ctx context.Context, ev protocol.PlatformEventParams) error
	Status func(st protocol.PlatformStatusParams)
}

// AddPlatform records a register_platform; a second one of the same name by
// the same plugin replaces the first.
func (r *Registry) AddPlatform(plugin string, p *PlatformEntry) {
	r.add(plugin, func(s *set) {
		if i := slices.IndexFunc(s.platforms, func(o *PlatformEntry) bool { return o.Name == p.Name }); i >= 0 {
			s.platforms[i] = p
			return
		}
		s.platforms = append(s.platforms, p)
	})
}

// Platforms returns the committed platform entries by name, in plugin key
// order. As upstream's registry, the last writer of a name wins; replaced
// says which registrations lost, for a warning.
func (r *Registry) Platforms() (out []*PlatformEntry, replaced []string) {
	byName := map[string]int{}
	r.committed(func(plugin string, s *set) {
		for _, p := range s.platforms {
			if i, ok := byName[p.Name]; ok {
				if out[i].Plugin != plugin {
					replaced = append(replaced, fmt.Sprintf("Platform '%s' re-registered (was %s from plugin %s, now %s from plugin %s)",
						p.Name, out[i].Label, out[i].Plugin, p.Label, plugin))
				}
				out[i] = p
				continue
			}
			byName[p.Name] = len(out)
			out = append(out, p)
		}
	})
	return out, replaced
}

// BindPlatform routes plugin's events for platform name to rc until unbind is
// called. The route outlives the plugin's restarts (its entry is registered
// anew each time; the gateway's adapter stays).
func (r *Registry) BindPlatform(plugin, name string, rc PlatformReceiver) (unbind func()) {
	key := plugin + "\x00" + name
	r.mu.Lock()
	if r.receivers == nil {
		r.receivers = map[string]*PlatformReceiver{}
	}
	p := &rc
	r.receivers[key] = p
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		if r.receivers[key] == p {
			delete(r.receivers, key)
		}
		r.mu.Unlock()
	}
}

// PlatformReceiver returns the route of plugin's platform name, if a gateway serves it.
func (r *Registry) PlatformReceiver(plugin, name string) (PlatformReceiver, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.receivers[plugin+"\x00"+name]
	if !ok {
		return PlatformReceiver{}, false
	}
	return *p, true
}

func (r *Registry) disposePlatform(plugin, name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e := r.entries[plugin]; e != nil {
		drop := func(p *PlatformEntry) bool { return p.Name == name }
		e.pending.platforms = slices.DeleteFunc(e.pending.platforms, drop)
		e.committed.platforms = slices.DeleteFunc(e.committed.platforms, drop)
	}
}
