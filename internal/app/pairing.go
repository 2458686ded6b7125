package app

import (
	"context"

	"github.com/hermes-go/hermes/internal/gateway/auth"
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
	return auth.New(ctx, o)
}
