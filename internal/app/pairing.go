package app

import (
	"context"

	"github.com/hermes-go/hermes/internal/gateway/auth"
	"github.com/hermes-go/hermes/internal/session"
)

// Authorizer is the gateway's authorisation rules and pairing store of this
// command's HERMES_HOME: `hermes pairing` edits the store through it; the
// gateway gives it config.yaml and the plugin platforms' variable names.
func (f *Factory) Authorizer(ctx context.Context, o auth.Options) (*auth.Authorizer, error) {
	h, err := f.Home()
	if err != nil {
		return nil, err
	}
	o.Home, o.Env = h.Dir, f.Env
	if o.Clock == nil {
		o.Clock = f.Now
	}
	if o.State == nil {
		// `hermes pairing` edits what the gateways use: the database's
		// documents when gateway.store is PostgreSQL.
		u, err := f.storeURL()
		if err != nil {
			return nil, err
		}
		if u != "" {
			s, err := f.OpenStore(ctx, false)
			if err != nil {
				return nil, err
			}
			f.closers = append(f.closers, func() { _ = s.Close() })
			o.State, _ = s.(session.DocStore)
		}
	}
	return auth.New(ctx, o)
}
