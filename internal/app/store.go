package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/session"
	"github.com/hermes-go/hermes/internal/session/pgstore"
)

// StoreKey is the config key that picks the session store's engine: a
// postgres:// URL, or unset for $HERMES_HOME/state.db.
const StoreKey = "gateway.store"

// Password sources for a gateway.store URL without one, in order: the
// URL's own wins, then these from .env, then from the environment.
var pgPasswordVars = []string{"HERMES_PG_PASSWORD", "PGPASSWORD"}

// storeURL reads gateway.store: "" for state.db.
func (f *Factory) storeURL() (string, error) {
	cs, err := f.Store()
	if err != nil {
		return "", err
	}
	doc, err := cs.Load()
	if err != nil {
		return "", err
	}
	v, ok := doc.Get(StoreKey)
	if !ok || v == nil {
		return "", nil
	}
	s, isString := v.(string)
	s = strings.TrimSpace(s)
	switch {
	case !isString:
		return "", fmt.Errorf("%s is not a string: write a postgres:// URL, or remove it to keep state.db", StoreKey)
	case s == "" || s == session.FileName || s == "sqlite":
		return "", nil
	case !pgstore.IsURL(s):
		return "", fmt.Errorf("%s %q is not a postgres:// URL: write postgres://user@host:5432/dbname, or remove it to keep $HERMES_HOME/state.db", StoreKey, s)
	}
	return s, nil
}

// pgPassword is the password for a gateway.store URL that has none.
func (f *Factory) pgPassword() (string, error) {
	h, err := f.Home()
	if err != nil {
		return "", err
	}
	dotenv, err := config.ReadDotenv(h.EnvPath())
	if err != nil {
		return "", err
	}
	for _, k := range pgPasswordVars {
		if v := dotenv[k]; v != "" {
			return v, nil
		}
	}
	for _, k := range pgPasswordVars {
		if v := f.Env(k); v != "" {
			return v, nil
		}
	}
	return "", nil
}

// OpenStore opens the session store gateway.store names (migrating its
// schema): PostgreSQL for a URL, else state.db. With mustExist and no
// state.db yet, it returns nil without creating one, so read-only commands
// leave HERMES_HOME alone (a database is always there to read).
func (f *Factory) OpenStore(ctx context.Context, mustExist bool) (session.Backend, error) {
	u, err := f.storeURL()
	if err != nil {
		return nil, err
	}
	if u != "" {
		pw, err := f.pgPassword()
		if err != nil {
			return nil, err
		}
		s, err := pgstore.Open(ctx, u, pgstore.Options{Password: pw})
		if err != nil {
			return nil, err
		}
		return s, nil
	}
	h, err := f.Home()
	if err != nil {
		return nil, err
	}
	path := session.Path(h.Dir)
	if mustExist {
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
	}
	s, err := session.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// MigrateStore opens the configured store, which brings its schema up to
// date, and reports where it is and the version it is at.
func (f *Factory) MigrateStore(ctx context.Context) (where string, version int, err error) {
	s, err := f.OpenStore(ctx, false)
	if err != nil {
		return "", 0, err
	}
	defer func() { _ = s.Close() }()
	v, err := s.Version(ctx)
	return s.Where(), v, err
}
