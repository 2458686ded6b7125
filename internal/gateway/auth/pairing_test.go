package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// testClock is a clock the test moves.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *testClock) Add(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

func openTestPairing(t *testing.T, home string, env map[string]string) (*Pairing, *testClock) {
	t.Helper()
	clk := &testClock{now: time.Unix(1_800_000_000, 0)}
	p, err := OpenPairing(context.Background(), PairingOptions{Home: home, Env: mapEnv(env), Clock: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	return p, clk
}

func pairingDir(home string) string { return filepath.Join(home, "platforms", "pairing") }

func TestUpstreamConstants(t *testing.T) {
	if CodeAlphabet != "ABCDEFGHJKLMNPQRSTUVWXYZ23456789" || CodeLength != 8 || CodeTTL != time.Hour ||
		RequestInterval != 10*time.Minute || MaxPendingPerPlatform != 3 || MaxFailedApprovals != 5 || Lockout != time.Hour {
		t.Fatal("the pairing constants drifted from upstream's gateway/pairing.py")
	}
}

// Codes use the alphabet only, and exist nowhere on disk: the files hold a
// salted hash, 0600.
func TestRequestStoresNoCode(t *testing.T) {
	home := t.TempDir()
	p, _ := openTestPairing(t, home, nil)
	ctx := context.Background()
	seen := map[string]bool{}
	for i := range 3 {
		code, err := p.Request(ctx, "telegram", fmt.Sprint(100+i), "Ann")
		if err != nil {
			t.Fatal(err)
		}
		if len(code) != CodeLength || strings.Trim(code, CodeAlphabet) != "" || seen[code] {
			t.Fatalf("code %q: want %d distinct letters of %s", code, CodeLength, CodeAlphabet)
		}
		seen[code] = true
	}
	entries, err := os.ReadDir(pairingDir(home))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		path := filepath.Join(pairingDir(home), e.Name())
		fi, _ := os.Stat(path)
		if e.Name() != ".lock" && fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %#o, want 0600", e.Name(), fi.Mode().Perm())
		}
		data, _ := os.ReadFile(path)
		for code := range seen {
			if strings.Contains(string(data), code) {
				t.Errorf("%s holds the code %s", e.Name(), code)
			}
		}
	}
	var pending map[string]pendingEntry
	data, _ := os.ReadFile(filepath.Join(pairingDir(home), "telegram-pending.json"))
	if err := json.Unmarshal(data, &pending); err != nil || len(pending) != 3 {
		t.Fatalf("pending file %s: %v", data, err)
	}
	for id, e := range pending {
		if len(id) != 16 || len(e.Salt) != 32 || len(e.Hash) != 64 || e.CreatedAt == nil || e.UserName != "Ann" {
			t.Errorf("entry %s = %+v: want upstream's shape (16-hex id, 16-byte salt, sha256 hash)", id, e)
		}
	}
}

func TestRequestLimits(t *testing.T) {
	ctx := context.Background()
	t.Run("one request per user per 10 minutes", func(t *testing.T) {
		p, clk := openTestPairing(t, t.TempDir(), nil)
		if _, err := p.Request(ctx, "telegram", "1", ""); err != nil {
			t.Fatal(err)
		}
		clk.Add(RequestInterval - time.Second)
		if _, err := p.Request(ctx, "telegram", "1", ""); !errors.Is(err, ErrRateLimited) {
			t.Fatalf("after 9m59s: %v, want rate-limited", err)
		}
		if _, err := p.Request(ctx, "discord", "1", ""); err != nil {
			t.Fatalf("the same id on another platform: %v", err)
		}
		clk.Add(time.Second)
		if _, err := p.Request(ctx, "telegram", "1", ""); err != nil {
			t.Fatalf("after 10m: %v", err)
		}
	})
	t.Run("three pending per platform, then the sender is rate-limited", func(t *testing.T) {
		p, clk := openTestPairing(t, t.TempDir(), nil)
		for _, u := range []string{"1", "2", "3"} {
			if _, err := p.Request(ctx, "telegram", u, ""); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := p.Request(ctx, "telegram", "4", ""); !errors.Is(err, ErrTooManyPending) {
			t.Fatalf("fourth: %v, want too many pending", err)
		}
		if _, err := p.Request(ctx, "telegram", "4", ""); !errors.Is(err, ErrRateLimited) {
			t.Fatalf("fourth again: %v, want rate-limited", err)
		}
		if _, err := p.Request(ctx, "discord", "4", ""); err != nil {
			t.Fatalf("another platform has room: %v", err)
		}
		clk.Add(CodeTTL + time.Second) // the three expire
		if _, err := p.Request(ctx, "telegram", "4", ""); err != nil {
			t.Fatalf("after the pending codes expired: %v", err)
		}
		list, err := p.ListPending(ctx, "telegram")
		if err != nil || len(list) != 1 || list[0].UserID != "4" {
			t.Errorf("pending = %+v, %v; want only user 4's", list, err)
		}
	})
	t.Run("bad input", func(t *testing.T) {
		p, _ := openTestPairing(t, t.TempDir(), nil)
		for _, tc := range []struct{ platform, user, want string }{
			{"../etc", "1", "invalid platform name"},
			{"Tele gram", "1", "invalid platform name"},
			{"telegram", " ", "needs the sender's user id"},
		} {
			if _, err := p.Request(ctx, tc.platform, tc.user, ""); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Request(%q, %q) = %v, want %q", tc.platform, tc.user, err, tc.want)
			}
		}
	})
}

func TestApproveExpiredAndWrongCodes(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	p, clk := openTestPairing(t, home, nil)
	code, err := p.Request(ctx, "telegram", "1", "Ann")
	if err != nil {
		t.Fatal(err)
	}
	clk.Add(CodeTTL + time.Second)
	var ce *CodeError
	if _, err := p.Approve(ctx, "telegram", code); !errors.As(err, &ce) || ce.Remaining != MaxFailedApprovals-1 {
		t.Fatalf("expired code: %v, want a code error with %d left", err, MaxFailedApprovals-1)
	}
	if list, _ := p.ListPending(ctx, ""); len(list) != 0 {
		t.Errorf("the expired request is still listed: %+v", list)
	}
	// A success resets the count of failures in a row.
	clk.Add(RequestInterval)
	code, _ = p.Request(ctx, "telegram", "1", "Ann")
	if a, err := p.Approve(ctx, "telegram", "  "+strings.ToLower(code)+" "); err != nil || a.UserID != "1" || a.UserName != "Ann" {
		t.Fatalf("Approve = %+v, %v", a, err)
	}
	for i := 1; i < MaxFailedApprovals; i++ {
		if _, err := p.Approve(ctx, "telegram", "AAAAAAAA"); !errors.As(err, &ce) || ce.Remaining != MaxFailedApprovals-i {
			t.Fatalf("failure %d: %v, want %d left (the success before reset the count)", i, err, MaxFailedApprovals-i)
		}
	}
	if _, err := p.Approve(ctx, "telegram", "AAAAAAAA"); !errors.As(err, &ce) || ce.LockedUntil.IsZero() {
		t.Fatalf("fifth failure: %v, want the lockout to start", err)
	}
	// Locked: a good code is refused too, and nobody gets a new one.
	if _, err := p.Request(ctx, "telegram", "2", ""); !errors.Is(err, ErrLockedOut) {
		t.Fatalf("Request while locked: %v", err)
	}
	clk.Add(RequestInterval)
	good, err := p.Request(ctx, "discord", "2", "")
	if err != nil {
		t.Fatal(err)
	}
	var le *LockedError
	if _, err := p.Approve(ctx, "telegram", "BBBBBBBB"); !errors.As(err, &le) || !errors.Is(err, ErrLockedOut) {
		t.Fatalf("approve while locked: %v, want a lockout", err)
	}
	if _, err := p.Approve(ctx, "discord", good); err != nil {
		t.Fatalf("the lockout is per platform: %v", err)
	}
	clk.Add(Lockout)
	tg, err := p.Request(ctx, "telegram", "3", "")
	if err != nil {
		t.Fatalf("after the lockout: %v", err)
	}
	if _, err := p.Approve(ctx, "telegram", tg); err != nil {
		t.Fatalf("approve after the lockout: %v", err)
	}
	approved, err := p.ListApproved("")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range approved {
		got = append(got, a.Platform+"/"+a.UserID)
	}
	if strings.Join(got, " ") != "discord/2 telegram/1 telegram/3" {
		t.Errorf("approved = %v", got)
	}
}

func TestRevokeAndClearPending(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	p, _ := openTestPairing(t, home, nil)
	pairUser(t, p, "telegram", "1")
	if ok, _ := p.IsApproved("telegram", "1"); !ok {
		t.Fatal("not approved")
	}
	r, err := p.Revoke(ctx, "telegram", "1")
	if err != nil || !r.Paired {
		t.Fatalf("Revoke = %+v, %v", r, err)
	}
	if ok, _ := p.IsApproved("telegram", "1"); ok {
		t.Error("still approved after revoke")
	}
	if r, err := p.Revoke(ctx, "telegram", "1"); err != nil || r.Paired {
		t.Errorf("second revoke = %+v, %v; want nothing found", r, err)
	}
	for _, pl := range []string{"telegram", "discord"} {
		if _, err := p.Request(ctx, pl, "9", ""); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := p.ClearPending(ctx, "discord"); err != nil || n != 1 {
		t.Errorf("ClearPending(discord) = %d, %v", n, err)
	}
	if n, err := p.ClearPending(ctx, ""); err != nil || n != 1 {
		t.Errorf("ClearPending() = %d, %v; want telegram's one", n, err)
	}
}

// Files hermes cannot parse are reported by name and never written over.
func TestMalformedFiles(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		file, content string
		op            func(p *Pairing) error
	}{
		{"telegram-pending.json", "{not json", func(p *Pairing) error { _, err := p.Request(ctx, "telegram", "1", ""); return err }},
		{"telegram-pending.json", "[1,2]", func(p *Pairing) error { _, err := p.Approve(ctx, "telegram", "ABCDEFGH"); return err }},
		{"telegram-approved.json", "null", func(p *Pairing) error {
			code, err := p.Request(ctx, "telegram", "1", "")
			if err == nil {
				_, err = p.Approve(ctx, "telegram", code)
			}
			return err
		}},
		{"_rate_limits.json", `{"telegram:1": "soon"}`, func(p *Pairing) error { _, err := p.Request(ctx, "telegram", "1", ""); return err }},
		{"discord-pending.json", "{", func(p *Pairing) error { _, err := p.ClearPending(ctx, ""); return err }},
		{"telegram-approved.json", "{", func(p *Pairing) error { _, err := p.ListApproved(""); return err }},
	} {
		t.Run(tc.file+" "+tc.content, func(t *testing.T) {
			home := t.TempDir()
			p, _ := openTestPairing(t, home, nil)
			path := filepath.Join(pairingDir(home), tc.file)
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			err := tc.op(p)
			var me *MalformedError
			if !errors.As(err, &me) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "hermes has not changed it") {
				t.Fatalf("err = %v, want a MalformedError naming %s", err, path)
			}
			if got, _ := os.ReadFile(path); string(got) != tc.content {
				t.Errorf("%s was rewritten: %q", tc.file, got)
			}
		})
	}
}

// The legacy $HERMES_HOME/pairing/ is merged once (the active entries win) and
// marked merged, so a user revoked afterwards does not come back.
func TestLegacyDirMerged(t *testing.T) {
	home := t.TempDir()
	legacy := filepath.Join(home, "pairing")
	write := func(path, data string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(legacy, "telegram-approved.json"), `{"1": {"user_name": "old", "approved_at": 1}, "2": {"user_name": "legacy", "approved_at": 1}}`)
	write(filepath.Join(pairingDir(home), "telegram-approved.json"), `{"1": {"user_name": "new", "approved_at": 2}}`)
	p, _ := openTestPairing(t, home, nil)
	list, err := p.ListApproved("telegram")
	if err != nil || len(list) != 2 || list[0].UserName != "new" || list[1].UserName != "legacy" {
		t.Fatalf("approved after the merge = %+v, %v", list, err)
	}
	if _, err := os.Stat(filepath.Join(legacy, "telegram-approved.json"+legacyMergedSuffix)); err != nil {
		t.Errorf("the legacy file is not marked merged: %v", err)
	}
	if _, err := p.Revoke(context.Background(), "telegram", "2"); err != nil {
		t.Fatal(err)
	}
	p2, _ := openTestPairing(t, home, nil)
	if ok, _ := p2.IsApproved("telegram", "2"); ok {
		t.Error("a revoked legacy user came back on the next open")
	}
	write(filepath.Join(legacy, "discord-approved.json"), "{oops")
	if _, err := OpenPairing(context.Background(), PairingOptions{Home: home}); err == nil || !strings.Contains(err.Error(), "discord-approved.json") {
		t.Errorf("a malformed legacy file: %v, want an error naming it", err)
	}
}

// A pending entry upstream's Python wrote (salted SHA-256 by hashlib) is
// approved by its code: the files are shared with upstream's format.
func TestApproveUpstreamWrittenEntry(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	home := t.TempDir()
	dir := pairingDir(home)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	script := `import hashlib, json, os, sys, time
salt = os.urandom(16)
entry = {"hash": hashlib.sha256(salt + b"XKGH5N7P").hexdigest(), "salt": salt.hex(),
         "user_id": "42", "user_name": "py", "created_at": time.time()}
json.dump({"0123456789abcdef": entry, "LEGACYCO": {"user_id": "43", "user_name": "", "created_at": time.time()}},
          open(sys.argv[1], "w"))
`
	out, err := exec.Command(py, "-c", script, filepath.Join(dir, "telegram-pending.json")).CombinedOutput()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, out)
	}
	p, err := OpenPairing(context.Background(), PairingOptions{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Approve(context.Background(), "telegram", "LEGACYCO"); err == nil {
		t.Error("a plaintext (pre-hash) entry was approved by its key")
	}
	a, err := p.Approve(context.Background(), "telegram", "xkgh5n7p")
	if err != nil || a.UserID != "42" || a.UserName != "py" {
		t.Fatalf("Approve = %+v, %v", a, err)
	}
}

func TestAllowlistSync(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name        string
		processEnv  map[string]string
		dotenv      string // "-": no file
		approve     string // the user approved
		wantApprove string // .env after approve ("-": no file)
		wantRevoke  string // .env after revoking the same user
	}{
		{"appended to a configured list, comments kept",
			nil, "# who\nTELEGRAM_ALLOWED_USERS=1 # owner\nOTHER=x\n", "7",
			"# who\nTELEGRAM_ALLOWED_USERS=1,7\nOTHER=x\n", "# who\nTELEGRAM_ALLOWED_USERS=1\nOTHER=x\n"},
		{"no list configured: none is created", nil, "OTHER=x\n", "7", "OTHER=x\n", "OTHER=x\n"},
		{"no .env, no list: no file", nil, "-", "7", "-", "-"},
		{"a star stays a star", nil, "TELEGRAM_ALLOWED_USERS=*\n", "7", "TELEGRAM_ALLOWED_USERS=*\n", "TELEGRAM_ALLOWED_USERS=*\n"},
		{"already listed", nil, "TELEGRAM_ALLOWED_USERS=7\n", "7", "TELEGRAM_ALLOWED_USERS=7\n", ""},
		{"a list of the environment is taken over by .env",
			map[string]string{"TELEGRAM_ALLOWED_USERS": "1"}, "-", "7",
			"TELEGRAM_ALLOWED_USERS=1,7\n", "TELEGRAM_ALLOWED_USERS=1\n"},
		{"the environment's only user revoked: .env keeps an empty list",
			map[string]string{"TELEGRAM_ALLOWED_USERS": "7"}, "A=1\n", "7",
			"A=1\n", "A=1\nTELEGRAM_ALLOWED_USERS=\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			envPath := filepath.Join(home, ".env")
			if tc.dotenv != "-" {
				if err := os.WriteFile(envPath, []byte(tc.dotenv), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			read := func() string {
				data, err := os.ReadFile(envPath)
				if err != nil {
					return "-"
				}
				return string(data)
			}
			p, _ := openTestPairing(t, home, tc.processEnv)
			code, err := p.Request(ctx, "telegram", tc.approve, "")
			if err != nil {
				t.Fatal(err)
			}
			a, err := p.Approve(ctx, "telegram", code)
			if err != nil || a.AllowlistErr != nil {
				t.Fatalf("Approve = %+v, %v", a, err)
			}
			if got := read(); got != tc.wantApprove {
				t.Errorf("after approve .env =\n%q\nwant\n%q", got, tc.wantApprove)
			}
			if (a.Allowlist != "") != (tc.wantApprove != tc.dotenv && !(tc.dotenv == "-" && tc.wantApprove == "-")) {
				t.Errorf("Approval.Allowlist = %q", a.Allowlist)
			}
			if _, err := p.Revoke(ctx, "telegram", tc.approve); err != nil {
				t.Fatal(err)
			}
			if got := read(); got != tc.wantRevoke {
				t.Errorf("after revoke .env =\n%q\nwant\n%q", got, tc.wantRevoke)
			}
		})
	}
}

// A user id that is not one list item (a plugin platform's "5,6") is approved
// in the store and never written into the allowlist, where it would let 6 in.
func TestAllowlistRefusesListSyntax(t *testing.T) {
	home := t.TempDir()
	envPath := filepath.Join(home, ".env")
	if err := os.WriteFile(envPath, []byte("WEBCHAT_ALLOWED_USERS=1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, _ := openTestPairing(t, home, nil)
	ctx := context.Background()
	code, err := p.Request(ctx, "webchat", "5,6", "")
	if err != nil {
		t.Fatal(err)
	}
	a, err := p.Approve(ctx, "webchat", code)
	if err != nil || a.AllowlistErr == nil || !strings.Contains(a.AllowlistErr.Error(), "comma-separated") {
		t.Fatalf("Approve = %+v, %v; want approved with an allowlist error", a, err)
	}
	if data, _ := os.ReadFile(envPath); string(data) != "WEBCHAT_ALLOWED_USERS=1\n" {
		t.Errorf(".env = %q, want it unchanged", data)
	}
	if ok, _ := p.IsApproved("webchat", "5,6"); !ok {
		t.Error("not approved in the store")
	}
}

// Two Pairing values (as two processes have) never lose each other's updates.
func TestConcurrentStores(t *testing.T) {
	home := t.TempDir()
	ctx := context.Background()
	const workers, each = 4, 6
	var wg sync.WaitGroup
	var mu sync.Mutex
	var want []string
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, err := OpenPairing(ctx, PairingOptions{Home: home})
			if err != nil {
				t.Error(err)
				return
			}
			ids, err := requestAndApprove(ctx, p, fmt.Sprintf("g%d", w), each)
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			want = append(want, ids...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	checkApproved(t, home, want)
}

// requestAndApprove pairs n users on telegram, retrying (under fresh ids: each
// try counts for the rate limit) while the platform has 3 pending codes.
func requestAndApprove(ctx context.Context, p *Pairing, prefix string, n int) ([]string, error) {
	var ids []string
	for i := 0; i < n; i++ {
		for try := 0; ; try++ {
			id := fmt.Sprintf("%s-%d-%d", prefix, i, try)
			code, err := p.Request(ctx, "telegram", id, "")
			if errors.Is(err, ErrTooManyPending) {
				time.Sleep(time.Millisecond)
				continue
			}
			if err != nil {
				return ids, err
			}
			if _, err := p.Approve(ctx, "telegram", code); err != nil {
				return ids, err
			}
			ids = append(ids, id)
			break
		}
	}
	return ids, nil
}

func checkApproved(t *testing.T, home string, want []string) {
	t.Helper()
	p, err := OpenPairing(context.Background(), PairingOptions{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	list, err := p.ListApproved("telegram")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range list {
		got = append(got, a.UserID)
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("approved (%d):\n%v\nwant (%d):\n%v", len(got), got, len(want), want)
	}
	dir := storeDir{dir: pairingDir(home)}
	lim, err := readLimits(docs{ctx: context.Background(), r: dir, where: dir.DocWhere}, limitsName)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range want {
		if _, ok := lim["telegram:"+id]; !ok {
			t.Errorf("the rate-limit record of %s was lost", id)
		}
	}
}

// Real processes: the test binary run again as workers on one HERMES_HOME.
func TestConcurrentProcesses(t *testing.T) {
	if home := os.Getenv("HERMES_AUTH_TEST_WORKER_HOME"); home != "" {
		p, err := OpenPairing(context.Background(), PairingOptions{Home: home})
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		ids, err := requestAndApprove(context.Background(), p, os.Getenv("HERMES_AUTH_TEST_WORKER"), 5)
		fmt.Println(strings.Join(ids, " "))
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	home := t.TempDir()
	const workers = 3
	outs := make([][]byte, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestConcurrentProcesses$")
			cmd.Env = append(os.Environ(), "HERMES_AUTH_TEST_WORKER_HOME="+home, fmt.Sprintf("HERMES_AUTH_TEST_WORKER=p%d", w))
			outs[w], errs[w] = cmd.Output()
		}()
	}
	wg.Wait()
	var want []string
	for w := range workers {
		if errs[w] != nil {
			t.Fatalf("worker %d: %v\n%s", w, errs[w], outs[w])
		}
		want = append(want, strings.Fields(strings.Split(string(outs[w]), "\n")[0])...)
	}
	if len(want) != workers*5 {
		t.Fatalf("workers paired %d users, want %d: %q", len(want), workers*5, outs)
	}
	checkApproved(t, home, want)
}
