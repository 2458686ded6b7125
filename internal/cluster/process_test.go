package cluster

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// The test binary re-executed as a cluster process: childURLEnv names the
// database, childRoleEnv what it does.
const (
	childURLEnv  = "HERMES_CLUSTER_TEST_CHILD_URL"
	childRoleEnv = "HERMES_CLUSTER_TEST_CHILD_ROLE"
	childWorkEnv = "HERMES_CLUSTER_TEST_CHILD_WORK_MS"
)

// childMain runs until killed. "worker": two workers that log each item's
// start and finish in test_log (the work's visible effect) around a pause.
// "leader": a candidate for "discord" that performs outbox actions into
// test_actions and prints "leading" when it gains the role.
func childMain(url, role string) int {
	ctx := context.Background()
	n, err := Open(ctx, fast(url))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	pid := os.Getpid()
	switch role {
	case "worker":
		ms, _ := strconv.Atoi(os.Getenv(childWorkEnv))
		for range 2 {
			go func() {
				for {
					it, err := n.Next(ctx)
					if err != nil {
						continue
					}
					if _, err := n.pool.Exec(ctx, "INSERT INTO test_log (item, key, pid, attempt, phase) VALUES ($1, $2, $3, $4, 'start')", it.ID, it.SessionKey, pid, it.Attempt); err != nil {
						fmt.Fprintln(os.Stderr, err)
					}
					time.Sleep(time.Duration(ms) * time.Millisecond)
					if _, err := n.pool.Exec(ctx, "INSERT INTO test_log (item, key, pid, attempt, phase) VALUES ($1, $2, $3, $4, 'finish')", it.ID, it.SessionKey, pid, it.Attempt); err != nil {
						fmt.Fprintln(os.Stderr, err)
					}
					if err := finish(ctx, n, it); err != nil {
						fmt.Fprintln(os.Stderr, err)
					}
				}
			}()
		}
	case "leader":
		n.Elect(ctx, "discord", func(lctx context.Context) {
			fmt.Println("leading")
			for {
				a, err := n.NextAction(lctx, "discord")
				if err != nil {
					return
				}
				_, _ = n.pool.Exec(ctx, "INSERT INTO test_actions (pid, payload) VALUES ($1, $2)", pid, string(a.Payload))
				_ = n.Ack(ctx, a)
			}
		})
	default:
		fmt.Fprintf(os.Stderr, "unknown child role %q\n", role)
		return 2
	}
	select {}
}

func startChild(t *testing.T, url, role string, env ...string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append([]string{childURLEnv + "=" + url, childRoleEnv + "=" + role}, env...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd, bufio.NewScanner(out)
}

func kill(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
}

type logRow struct {
	item    int64
	key     string
	pid     int
	attempt int
	phase   string
}

// Three worker processes; one is killed with SIGKILL in the middle of items.
// Its leases expire, its items are done by the others (attempt 2), every
// item finishes, at most once more than once and only where the victim had
// finished it before dying, and each conversation's items finish in order.
func TestProcessKilledMidItem(t *testing.T) {
	const keys, per = 30, 10
	url := server(t).DB(t)
	ctx := testCtx(t, 2*time.Minute)
	n := open(t, fast(url))
	if _, err := n.pool.Exec(ctx, `CREATE TABLE test_log (seq bigserial PRIMARY KEY, item bigint, key text, pid int, attempt int, phase text)`); err != nil {
		t.Fatal(err)
	}
	for i := range per {
		for k := range keys {
			if _, err := n.Enqueue(ctx, "telegram", strconv.Itoa(k*per+i), fmt.Sprintf("chat%d", k), nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	victim, _ := startChild(t, url, "worker", childWorkEnv+"=400")
	for range 2 {
		startChild(t, url, "worker", childWorkEnv+"=30")
	}
	// Kill the victim while it has an item started and not finished.
	waitFor(ctx, t, "the victim to be mid-item", func() bool {
		var open int
		err := n.pool.QueryRow(ctx, `SELECT count(*) FROM test_log s WHERE s.pid = $1 AND s.phase = 'start'
			AND NOT EXISTS (SELECT 1 FROM test_log f WHERE f.item = s.item AND f.pid = s.pid AND f.phase = 'finish')
			AND (SELECT count(*) FROM test_log WHERE phase = 'finish') > 20`, victim.Process.Pid).Scan(&open)
		return err == nil && open > 0
	})
	kill(t, victim)
	waitFor(ctx, t, "the queue to empty", func() bool {
		st, err := n.Status(ctx)
		return err == nil && st.QueueDepth == 0
	})
	rows := readLog(ctx, t, n.pool)
	finishes := map[int64][]logRow{}
	victimOpen := map[int64]bool{}
	for _, r := range rows {
		if r.phase == "finish" {
			finishes[r.item] = append(finishes[r.item], r)
			if r.pid == victim.Process.Pid {
				delete(victimOpen, r.item)
			}
		} else if r.pid == victim.Process.Pid {
			victimOpen[r.item] = true
		}
	}
	if len(finishes) != keys*per {
		t.Fatalf("%d items finished, want %d", len(finishes), keys*per)
	}
	if len(victimOpen) == 0 {
		t.Fatal("the victim was not killed mid-item")
	}
	for item := range victimOpen {
		f := finishes[item]
		if len(f) != 1 || f[0].pid == victim.Process.Pid || f[0].attempt < 2 {
			t.Errorf("item %d, in flight in the killed process: finishes %+v", item, f)
		}
	}
	for item, f := range finishes {
		if len(f) > 2 || (len(f) == 2 && f[0].pid != victim.Process.Pid) {
			t.Errorf("item %d finished %d times: %+v", item, len(f), f)
		}
	}
	// Order: the finishes of each key, repeats collapsed, follow item ids.
	last := map[string]int64{}
	for _, r := range rows {
		if r.phase != "finish" {
			continue
		}
		if r.item < last[r.key] {
			t.Errorf("%s: item %d finished after %d", r.key, r.item, last[r.key])
		}
		last[r.key] = r.item
	}
}

func readLog(ctx context.Context, t *testing.T, pool *pgxpool.Pool) []logRow {
	t.Helper()
	rs, err := pool.Query(ctx, "SELECT item, key, pid, attempt, phase FROM test_log ORDER BY seq")
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	var out []logRow
	for rs.Next() {
		var r logRow
		if err := rs.Scan(&r.item, &r.key, &r.pid, &r.attempt, &r.phase); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// The Discord owner is a separate process; it is killed with SIGKILL and a
// candidate in this process takes the role within the lease expiry, then
// performs the actions sent meanwhile.
func TestLeaderProcessKilled(t *testing.T) {
	url := server(t).DB(t)
	ctx := testCtx(t, time.Minute)
	n := open(t, fast(url))
	if _, err := n.pool.Exec(ctx, `CREATE TABLE test_actions (seq bigserial PRIMARY KEY, pid int, payload text)`); err != nil {
		t.Fatal(err)
	}
	child, out := startChild(t, url, "leader")
	if !out.Scan() || out.Text() != "leading" {
		t.Fatalf("child: %q %v", out.Text(), out.Err())
	}
	var mu = make(chan struct{}, 1)
	var performed []string
	e := n.Elect(ctx, "discord", func(lctx context.Context) {
		for {
			a, err := n.NextAction(lctx, "discord")
			if err != nil {
				return
			}
			mu <- struct{}{}
			performed = append(performed, string(a.Payload))
			<-mu
			_ = n.Ack(lctx, a)
		}
	})
	defer e.Stop()
	if err := n.Send(ctx, "discord", []byte("before")); err != nil {
		t.Fatal(err)
	}
	waitFor(ctx, t, "the child to perform", func() bool {
		var pid int
		err := n.pool.QueryRow(ctx, "SELECT pid FROM test_actions WHERE payload = 'before'").Scan(&pid)
		return err == nil && pid == child.Process.Pid
	})
	if e.Leading() {
		t.Fatal("two leaders")
	}
	changes := e.Changes()
	kill(t, child)
	killed := time.Now()
	if err := n.Send(ctx, "discord", []byte("after")); err != nil {
		t.Fatal(err)
	}
	select {
	case v := <-changes:
		if !v {
			t.Fatal("lost instead of gained")
		}
	case <-time.After(fast(url).LeaseTTL + 5*time.Second):
		t.Fatal("no takeover")
	}
	t.Logf("takeover %s after the kill", time.Since(killed).Round(time.Millisecond))
	waitFor(ctx, t, "the new leader to perform", func() bool {
		mu <- struct{}{}
		defer func() { <-mu }()
		return strings.Join(performed, ",") == "after"
	})
}
