package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/testutil/pgtest"
)

// One server for the package's tests (each test gets its own database); the
// restart test starts its own. The binary also runs as a child worker or
// leader when the process tests re-exec it.
var (
	sharedOnce sync.Once
	shared     *pgtest.Cluster
	sharedErr  error
)

func TestMain(m *testing.M) {
	if url := os.Getenv(childURLEnv); url != "" {
		os.Exit(childMain(url, os.Getenv(childRoleEnv)))
	}
	code := m.Run()
	if shared != nil {
		shared.Remove()
	}
	os.Exit(code)
}

func server(t testing.TB) *pgtest.Cluster {
	t.Helper()
	sharedOnce.Do(func() {
		c, err := pgtest.New()
		if err != nil {
			sharedErr = err
			return
		}
		if err := c.Start(); err != nil {
			c.Remove()
			sharedErr = err
			return
		}
		shared = c
	})
	if sharedErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("pgtest: %v", sharedErr)
		}
		t.Skipf("pgtest: %v", sharedErr)
	}
	return shared
}

// fast is a configuration that makes expiry and takeover take seconds.
func fast(url string) Config {
	return Config{
		URL: url, LeaseTTL: 2 * time.Second, Heartbeat: 200 * time.Millisecond,
		Poll: 200 * time.Millisecond, ElectRetry: 100 * time.Millisecond,
		RetryDelay: 20 * time.Millisecond, MaxAttempts: 3,
	}
}

func open(t testing.TB, cfg Config) *Node {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Close)
	return n
}

func testCtx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// finish calls Done until it lands: a database error (a restart) is retried,
// and ErrLeaseLost after a retry means the first try had committed or another
// worker had the item; either way it is finished.
func finish(ctx context.Context, n *Node, it *Item) error {
	for try := 0; ; try++ {
		err := n.Done(ctx, it)
		if err == nil || (errors.Is(err, ErrLeaseLost) && try > 0) {
			return nil
		}
		if errors.Is(err, ErrLeaseLost) || ctx.Err() != nil {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// enqueue retries on database errors: dedupe makes that safe.
func enqueue(ctx context.Context, n *Node, platform, updateID, key string, payload []byte) error {
	for {
		_, err := n.Enqueue(ctx, platform, updateID, key, payload)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%w (last: %v)", ctx.Err(), err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
