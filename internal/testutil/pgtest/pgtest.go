// Package pgtest starts throwaway PostgreSQL clusters for tests: Debian's
// server binaries, initdb into a temporary directory, a server listening only
// on a Unix socket in that directory, torn down when the test ends. Nothing
// is shared with a system cluster, and no TCP port is taken.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Cluster is one running (or stopped) throwaway server.
type Cluster struct {
	Dir     string // owns everything: data/, the socket, server.log
	binDir  string
	cred    *syscall.Credential // non-nil when running as root: the server runs as "postgres"
	started bool
}

var dbSeq atomic.Int64

// Binaries finds the directory of initdb/pg_ctl/postgres: PATH first, then
// Debian's /usr/lib/postgresql/<major>/bin (the highest major).
func Binaries() (string, error) {
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		dir := filepath.Dir(p)
		if _, err := os.Stat(filepath.Join(dir, "initdb")); err == nil {
			return dir, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return majorOf(dirs[i]) > majorOf(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "pg_ctl")); err == nil {
			return d, nil
		}
	}
	return "", errors.New("PostgreSQL server binaries (initdb, pg_ctl) not found: install Debian's postgresql package (apt-get install -y postgresql)")
}

func majorOf(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// Start initialises and starts a cluster for t, stopped and removed at the
// end of the test. Without the binaries the test is skipped, except under
// CI=true, where the suite's set-up promised them and the test fails.
func Start(t testing.TB) *Cluster {
	t.Helper()
	c, err := New()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("pgtest: %v", err)
		}
		t.Skipf("pgtest: %v", err)
	}
	t.Cleanup(func() { c.Remove() })
	if err := c.Start(); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return c
}

// New initialises a cluster in a fresh temporary directory (not started).
func New() (*Cluster, error) {
	bin, err := Binaries()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "hermes-pg-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{Dir: dir, binDir: bin}
	if os.Geteuid() == 0 {
		// initdb refuses to run as root: the server runs as Debian's
		// "postgres" account, which must be able to reach the directory.
		u, err := user.Lookup("postgres")
		if err != nil {
			c.Remove()
			return nil, fmt.Errorf("running as root needs the \"postgres\" account the postgresql package creates: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		c.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			c.Remove()
			return nil, err
		}
	}
	out, err := c.run("initdb", "-D", c.dataDir(), "-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C", "--no-sync")
	if err != nil {
		c.Remove()
		return nil, fmt.Errorf("initdb: %w\n%s", err, out)
	}
	return c, nil
}

func (c *Cluster) dataDir() string { return filepath.Join(c.Dir, "data") }

// SocketDir is the directory of the server's Unix socket (libpq's "host").
func (c *Cluster) SocketDir() string { return c.Dir }

// LogFile is the server's log, worth printing when a test fails.
func (c *Cluster) LogFile() string { return filepath.Join(c.Dir, "server.log") }

func (c *Cluster) run(tool string, args ...string) ([]byte, error) {
	cmd := exec.Command(filepath.Join(c.binDir, tool), args...)
	cmd.Dir = c.Dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "TZ=UTC")
	if c.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	}
	return cmd.CombinedOutput()
}

// Start starts the server and waits until it accepts connections. fsync is
// off (these clusters die with the test), but commits still reach the OS
// before they return, so a killed server (Stop("immediate")) loses nothing:
// the restart tests rely on that. HERMES_PGTEST_FSYNC=on turns fsync and
// full-page writes on, for benchmarks of what a durable server pays.
// pg_stat_statements is loaded so benchmarks can read the server's own time.
func (c *Cluster) Start() error {
	durability := []string{"-c fsync=off", "-c full_page_writes=off"}
	if os.Getenv("HERMES_PGTEST_FSYNC") == "on" {
		durability = []string{"-c fsync=on", "-c full_page_writes=on", "-c track_wal_io_timing=on"}
	}
	opts := strings.Join(append([]string{
		"-k " + c.SocketDir(),
		"-c listen_addresses=''",
	}, append(durability,
		"-c max_connections=200",
		"-c shared_preload_libraries=pg_stat_statements",
	)...), " ")
	out, err := c.run("pg_ctl", "-D", c.dataDir(), "-l", c.LogFile(), "-o", opts, "-w", "-t", "60", "start")
	if err != nil {
		log, _ := os.ReadFile(c.LogFile())
		return fmt.Errorf("pg_ctl start: %w\n%s\n%s", err, out, log)
	}
	c.started = true
	return nil
}

// Stop stops the server; mode is pg_ctl's: "fast" (disconnect clients),
// "immediate" (a crash, recovered at the next start).
func (c *Cluster) Stop(mode string) error {
	if !c.started {
		return nil
	}
	out, err := c.run("pg_ctl", "-D", c.dataDir(), "-m", mode, "-w", "-t", "60", "stop")
	if err != nil {
		return fmt.Errorf("pg_ctl stop: %w\n%s", err, out)
	}
	c.started = false
	return nil
}

// Restart stops the server the way mode says and starts it again.
func (c *Cluster) Restart(mode string) error {
	if err := c.Stop(mode); err != nil {
		return err
	}
	return c.Start()
}

// Remove stops the server (if running) and deletes the directory.
func (c *Cluster) Remove() {
	_ = c.Stop("immediate")
	_ = os.RemoveAll(c.Dir)
}

// URL is a connection URL for database db as the superuser, over the socket.
func (c *Cluster) URL(db string) string {
	return fmt.Sprintf("postgres:///%s?host=%s&user=postgres&sslmode=disable", db, c.SocketDir())
}

// CreateDB creates a new, empty database and returns its URL: tests sharing
// one cluster each get their own database.
func (c *Cluster) CreateDB(ctx context.Context, prefix string) (string, error) {
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		return "", err
	}
	defer func() { _ = conn.Close(context.Background()) }()
	name := fmt.Sprintf("%s_%d_%d", sanitize(prefix), os.Getpid(), dbSeq.Add(1))
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", err
	}
	return c.URL(name), nil
}

// DB is CreateDB for a test: a fresh database in cluster c.
func (c *Cluster) DB(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	u, err := c.CreateDB(ctx, t.Name())
	if err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	return u
}

func sanitize(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
		if b.Len() >= 40 {
			break
		}
	}
	if b.Len() == 0 {
		return "db"
	}
	return b.String()
}
