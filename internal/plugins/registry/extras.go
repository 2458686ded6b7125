package registry

import (
	"context"

	"github.com/hermes-go/hermes/pkg/protocol"
)

// The registrations that feed hermes' own machinery rather than the model's
// tools: redaction patterns, @ context reference providers and auxiliary tasks.

// ContextRef is one register_context_reference: `@<Prefix>:<target>` in a user
// message is expanded by Expand.
type ContextRef struct {
	Prefix      string
	Description string
	Plugin      string
	// Expand returns the text for target; ok false is the provider's None (skip).
	Expand func(ctx context.Context, target string) (text string, ok bool, err error)
}

// AuxTask is one register_auxiliary_task, configured under auxiliary.<Key>.
type AuxTask struct {
	Key         string
	DisplayName string
	Description string
	Plugin      string
	Defaults    map[string]any // upstream's routing defaults with the plugin's merged over
}

// AddRedactionPatterns records patterns that passed the redaction check.
func (r *Registry) AddRedactionPatterns(plugin string, patterns []string, o Other) {
	r.add(plugin, func(s *set) {
		s.redactions = append(s.redactions, patterns...)
		s.other = append(s.other, o)
	})
}

// AddContextRef records an @ reference provider.
func (r *Registry) AddContextRef(plugin string, c *ContextRef, o Other) {
	r.add(plugin, func(s *set) {
		s.ctxRefs = append(s.ctxRefs, c)
		s.other = append(s.other, o)
	})
}

// AddAuxTask records an auxiliary task.
func (r *Registry) AddAuxTask(plugin string, t *AuxTask, o Other) {
	r.add(plugin, func(s *set) {
		s.auxTasks = append(s.auxTasks, t)
		s.other = append(s.other, o)
	})
}

// RedactionPatterns returns every committed plugin pattern, in plugin key order.
func (r *Registry) RedactionPatterns() []string {
	var out []string
	r.committed(func(_ string, s *set) { out = append(out, s.redactions...) })
	return out
}

// ContextRefs returns the committed @ reference providers by prefix.
func (r *Registry) ContextRefs() map[string]*ContextRef {
	out := map[string]*ContextRef{}
	r.committed(func(_ string, s *set) {
		for _, c := range s.ctxRefs {
			if _, taken := out[c.Prefix]; !taken {
				out[c.Prefix] = c
			}
		}
	})
	return out
}

// AuxTask returns the committed auxiliary task key.
func (r *Registry) AuxTask(key string) (*AuxTask, bool) {
	var found *AuxTask
	r.committed(func(_ string, s *set) {
		for _, t := range s.auxTasks {
			if t.Key == key && found == nil {
				found = t
			}
		}
	})
	return found, found != nil
}

// ContextRefOwner returns the plugin holding prefix, pending or committed ("" when none).
func (r *Registry) ContextRefOwner(prefix string) string {
	return r.owner(func(s *set) bool {
		for _, c := range s.ctxRefs {
			if c.Prefix == prefix {
				return true
			}
		}
		return false
	})
}

// AuxTaskOwner returns the plugin holding key, pending or committed ("" when none).
func (r *Registry) AuxTaskOwner(key string) string {
	return r.owner(func(s *set) bool {
		for _, t := range s.auxTasks {
			if t.Key == key {
				return true
			}
		}
		return false
	})
}

func (r *Registry) owner(has func(s *set) bool) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, k := range r.keys {
		e := r.entries[k]
		if has(&e.committed) || has(&e.pending) {
			return k
		}
	}
	return ""
}

// TransportEntry is one register_approval_transport: Present is the
// plugin's present(request), asked when security.approval.transport names it.
type TransportEntry struct {
	Name    string
	Plugin  string
	Present func(ctx context.Context, req protocol.ApprovalRequest) (protocol.ApprovalDecision, error)
}

// AddApprovalTransport records an approval transport.
func (r *Registry) AddApprovalTransport(plugin string, t *TransportEntry, o Other) {
	r.add(plugin, func(s *set) {
		s.transports = append(s.transports, t)
		s.other = append(s.other, o)
	})
}

// ApprovalTransport returns the committed transport called name.
func (r *Registry) ApprovalTransport(name string) (*TransportEntry, bool) {
	var found *TransportEntry
	r.committed(func(_ string, s *set) {
		for _, t := range s.transports {
			if t.Name == name && found == nil {
				found = t
			}
		}
	})
	return found, found != nil
}

// ApprovalTransportOwner returns the plugin holding name, pending or committed ("" when none).
func (r *Registry) ApprovalTransportOwner(name string) string {
	return r.owner(func(s *set) bool {
		for _, t := range s.transports {
			if t.Name == name {
				return true
			}
		}
		return false
	})
}
