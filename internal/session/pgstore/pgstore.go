// Package pgstore is the session store on PostgreSQL (gateway.store:
// postgres://…): the same contract as state.db (session.Backend), shared by
// every gateway process and `hermes sessions` on any machine.
//
// pgx/v5 through a pgxpool. Each write is one autocommitted statement where
// it can be (a message is one round trip), so PostgreSQL's own concurrency
// replaces SQLite's group commit. The schema is versioned in schema_version
// and migrated on Open inside one transaction under an advisory lock, so two
// processes starting at once never both migrate.
package pgstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hermes-go/hermes/internal/clock"
	"github.com/hermes-go/hermes/internal/session"
)

// Store is a PostgreSQL session store. It is safe for concurrent use.
type Store struct {
	pool  *pgxpool.Pool
	where string
	now   func() time.Time
}

var _ session.Backend = (*Store)(nil)

// Options are what Open takes besides the URL.
type Options struct {
	// Password is used when the URL carries none ("" leaves libpq's own
	// sources: PGPASSWORD, ~/.pgpass).
	Password string
	// MaxConns bounds the pool (0: 16).
	MaxConns int32
}

// IsURL reports whether store (gateway.store's value) names a PostgreSQL
// database rather than a file.
func IsURL(store string) bool {
	s := strings.ToLower(strings.TrimSpace(store))
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// Open connects to the database at url and migrates its schema.
func Open(ctx context.Context, url string, o Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("gateway.store %q is not a PostgreSQL URL (%v): write it as postgres://user@host:5432/dbname", redactURL(url), unwrapParse(err))
	}
	if cfg.ConnConfig.Password == "" && o.Password != "" {
		cfg.ConnConfig.Password = o.Password
	}
	cfg.MaxConns = 16
	if o.MaxConns > 0 {
		cfg.MaxConns = o.MaxConns
	}
	cfg.ConnConfig.ConnectTimeout = 10 * time.Second
	s := &Store{where: describe(cfg.ConnConfig), now: clock.Now}
	s.pool, err = pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("session store %s: %w", s.where, err)
	}
	if err := s.pool.Ping(ctx); err != nil {
		s.pool.Close()
		return nil, s.unreachable(cfg.ConnConfig, err)
	}
	if _, err := s.Migrate(ctx); err != nil {
		s.pool.Close()
		return nil, err
	}
	return s, nil
}

// describe names the database for messages: never the password.
func describe(c *pgx.ConnConfig) string {
	return fmt.Sprintf("PostgreSQL database %q on %s (user %q)", c.Database, hostOf(c), c.User)
}

func hostOf(c *pgx.ConnConfig) string {
	if strings.HasPrefix(c.Host, "/") {
		return "socket " + c.Host
	}
	return net.JoinHostPort(c.Host, fmt.Sprint(c.Port))
}

// unreachable explains a failed first connection: what to check.
func (s *Store) unreachable(c *pgx.ConnConfig, err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "28P01", "28000":
			return fmt.Errorf("session store %s refused the login: %s; check the user and the password (HERMES_PG_PASSWORD in $HERMES_HOME/.env, or the URL's own)", s.where, pe.Message)
		case "3D000":
			return fmt.Errorf("session store %s: the database does not exist; create it (createdb %s) or fix gateway.store", s.where, c.Database)
		}
	}
	return fmt.Errorf("cannot reach the session store %s: %w; check that the server is running on %s and accepts connections from this machine, and gateway.store's host and port", s.where, err, hostOf(c))
}

// unwrapParse drops pgx's quoting of the whole URL (it would show a password).
func unwrapParse(err error) error {
	var pe *pgconn.ParseConfigError
	if errors.As(err, &pe) && pe.Unwrap() != nil {
		return pe.Unwrap()
	}
	if errors.As(err, &pe) {
		return errors.New(pe.Error()[strings.LastIndex(pe.Error(), ":")+1:])
	}
	return err
}

// redactURL hides the password of a URL shown in an error.
func redactURL(u string) string {
	at := strings.LastIndex(u, "@")
	scheme := strings.Index(u, "://")
	if at < 0 || scheme < 0 || at < scheme {
		return u
	}
	userinfo := u[scheme+3 : at]
	if i := strings.Index(userinfo, ":"); i >= 0 {
		return u[:scheme+3] + userinfo[:i] + ":xxxxx" + u[at:]
	}
	return u
}

// Where names the database (never the password).
func (s *Store) Where() string { return s.where }

// Now is the store's clock.
func (s *Store) Now() time.Time { return s.now() }

// SetClock replaces the clock that stamps messages and sessions.
func (s *Store) SetClock(now func() time.Time) { s.now = now }

// Close closes the pool.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// Pool is the connection pool, for what shares the database (the cluster's
// queue and leases) and for tests.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

func (s *Store) wrap(what string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, session.ErrNotFound) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("session store %s: %s: %w", s.where, what, err)
}

// pgCode is the SQLSTATE of err ("" for none).
func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

const (
	uniqueViolation     = "23505"
	foreignKeyViolation = "23503"
)

func ms(t time.Time) int64 { return t.UnixMilli() }

func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }
