package app

import (
	"context"
	"strings"
	"time"

	"github.com/hermes-go/hermes/internal/approval"
	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/plugins/registry"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// approvalRoute reads security.approval: the transport asked instead of the
// built-in prompts, if any. A setting that cannot be read selects a
// transport that does not exist, so approvals fail closed (upstream's
// "config-error").
func (f *Factory) approvalRoute(doc *config.Doc, reg func() *registry.Registry) *approval.TransportRoute {
	r := &approval.TransportRoute{Name: "builtin", Redact: f.Redactor().String, Logger: f.Logger()}
	if doc == nil {
		return r
	}
	if v, ok := doc.GetPath([]string{"security", "approval", "transport"}); ok && v != nil {
		s, isStr := v.(string)
		if !isStr {
			s = "config-error"
		}
		if s = strings.ToLower(strings.TrimSpace(s)); s != "" {
			r.Name = s
		}
	}
	if v, ok := doc.GetPath([]string{"security", "approval", "transport_fallback"}); ok {
		s, _ := v.(string)
		r.Fallback = strings.EqualFold(strings.TrimSpace(s), "builtin")
	}
	r.Lookup = func(name string) (approval.PresentFunc, bool) {
		rg := reg()
		if rg == nil {
			return nil, false
		}
		t, ok := rg.ApprovalTransport(name)
		if !ok {
			return nil, false
		}
		return func(ctx context.Context, req protocol.ApprovalRequest) (protocol.ApprovalDecision, error) {
			return t.Present(ctx, req)
		}, true
	}
	return r
}

// approvalTimeout is approvals.timeout (default 300 s, upstream's newer one).
func approvalTimeout(doc *config.Doc) time.Duration {
	if doc == nil {
		return 300 * time.Second
	}
	return time.Duration(intSetting(doc.Map(), []string{"approvals", "timeout"}, 300)) * time.Second
}
