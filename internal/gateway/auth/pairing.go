package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hermes-go/hermes/internal/clock"
	"github.com/hermes-go/hermes/internal/session"
)

// Upstream's pairing constants (gateway/pairing.py, wave2 §2.4).
const (
	CodeAlphabet          = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789" // no 0/O, 1/I
	CodeLength            = 8
	CodeTTL               = 3600 * time.Second
	RequestInterval       = 600 * time.Second // one code request per user per 10 minutes
	MaxPendingPerPlatform = 3
	MaxFailedApprovals    = 5
	Lockout               = 3600 * time.Second
)

// Request's refusals. A rate-limited request is answered with silence; the
// others with TooManyRequestsText (and the user is then rate-limited).
var (
	ErrRateLimited    = errors.New("this user asked for a pairing code less than 10 minutes ago")
	ErrTooManyPending = fmt.Errorf("the platform already has %d pending pairing codes", MaxPendingPerPlatform)
	ErrLockedOut      = errors.New("pairing is locked after too many failed approvals")
)

// CodeError is an approval whose code matched no pending request (wrong, or
// expired). Remaining is how many more failures lock the platform; LockedUntil
// is set when this failure locked it.
type CodeError struct {
	Platform    string
	Code        string
	Pending     int // the platform's live pending requests
	Remaining   int
	LockedUntil time.Time
}

func (e *CodeError) Error() string {
	return fmt.Sprintf("code %q not found or expired for platform %q", e.Code, e.Platform)
}

// LockedError is an approval refused because the platform is locked out.
type LockedError struct {
	Platform string
	Until    time.Time
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("pairing on %s is locked until %s after %d failed approvals in a row",
		e.Platform, e.Until.Local().Format("15:04:05"), MaxFailedApprovals)
}

func (e *LockedError) Unwrap() error { return ErrLockedOut }

// Pairing is the pairing store of one HERMES_HOME: pending codes, approved
// users, rate limits and lockouts in $HERMES_HOME/platforms/pairing/, shared by
// the gateway and `hermes pairing` in other processes (every change is a
// read-modify-write under the directory's lock, written atomically, 0600);
// or, with PairingOptions.State, the same documents in the session database.
// Codes exist only in the reply to the user: the files hold a salted hash.
type Pairing struct {
	store session.DocStore
	files *storeDir // the default files (nil: a database's documents)
	env   *envView
	names func(platform string) PlatformEnv
	now   func() time.Time
	rand  io.Reader
	mu    sync.Mutex // in-process writers queue here before the file lock

	cacheMu  sync.Mutex
	approved map[string]approvedCache // per platform, for IsApproved
}

type approvedCache struct {
	stamp os.FileInfo
	ids   map[string]bool
}

// Pending is one pending request, as `hermes pairing list` shows it. The code
// is never known here; RequestID names the entry.
type Pending struct {
	Platform   string    `json:"platform"`
	RequestID  string    `json:"request_id"`
	UserID     string    `json:"user_id"`
	UserName   string    `json:"user_name"`
	CreatedAt  time.Time `json:"created_at"`
	AgeMinutes int       `json:"age_minutes"`
}

// Approved is one approved (paired) user.
type Approved struct {
	Platform   string    `json:"platform"`
	UserID     string    `json:"user_id"`
	UserName   string    `json:"user_name"`
	ApprovedAt time.Time `json:"approved_at"`
}

// Approval is what Approve did: the user, and the allowlist variable it added
// them to (when one was configured) or why it could not.
type Approval struct {
	Approved
	Allowlist    string // the variable in .env the user was appended to; "" when none
	AllowlistErr error  // set: Allowlist could not be updated in .env; the approval stands
}

// Revocation is what Revoke did.
type Revocation struct {
	Paired       bool   // the user was in the approved list and is no longer
	Allowlist    string // the variable in .env the user was removed from; "" when none
	AllowlistErr error
}

// pendingEntry is one pending request on disk (upstream's shape: the code's
// salted SHA-256, never the code).
type pendingEntry struct {
	Hash      string   `json:"hash,omitempty"`
	Salt      string   `json:"salt,omitempty"`
	UserID    string   `json:"user_id"`
	UserName  string   `json:"user_name"`
	CreatedAt *float64 `json:"created_at"`
}

type approvedEntry struct {
	UserName   string  `json:"user_name"`
	ApprovedAt float64 `json:"approved_at"`
}

// docs is the pairing documents as one operation sees them: under the lock
// (tx set) or read only.
type docs struct {
	ctx   context.Context
	r     session.DocReader
	tx    session.DocTx // nil: read only
	where func(string) string
}

func (d docs) read(name string) (object, error) {
	data, err := d.r.Read(d.ctx, name)
	if err != nil {
		return nil, err
	}
	return parseObject(data, d.where(name))
}

func (d docs) write(name string, obj object) error {
	data, err := encodeObject(obj, d.where(name))
	if err != nil {
		return err
	}
	if d.tx == nil {
		return errors.New("pairing store: a write outside the lock") // a bug, never a user's doing
	}
	return d.tx.Write(d.ctx, name, data)
}

func (d docs) platforms(suffix string) ([]string, error) {
	names, err := d.r.Names(d.ctx)
	return platformsIn(names, suffix), err
}

// locked runs fn with the store's lock held.
func (p *Pairing) locked(ctx context.Context, fn func(d docs) error) error {
	return p.store.LockedDocs(ctx, func(tx session.DocTx) error {
		return fn(docs{ctx: ctx, r: tx, tx: tx, where: p.store.DocWhere})
	})
}

// view reads the documents without the lock.
func (p *Pairing) view(ctx context.Context) docs {
	return docs{ctx: ctx, r: p.store.Docs(), where: p.store.DocWhere}
}

func (p *Pairing) nowSeconds() float64 { return float64(p.now().UnixNano()) / 1e9 }

func fromSeconds(s float64) time.Time {
	sec, frac := math.Modf(s)
	return time.Unix(int64(sec), int64(frac*1e9))
}

// Request issues a pairing code for a user the rules do not authorise: the
// code goes to the user in the reply, its salted hash to the pending file.
// Every call counts as the user's request for the rate limit, refused or not.
func (p *Pairing) Request(ctx context.Context, platform, userID, userName string) (string, error) {
	if err := validPlatform(platform); err != nil {
		return "", err
	}
	if strings.TrimSpace(userID) == "" {
		return "", errors.New("a pairing code needs the sender's user id; the platform gave none")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var code string
	err := p.locked(ctx, func(d docs) error {
		now := p.nowSeconds()
		pending, err := p.livePending(d, platform, now)
		if err != nil {
			return err
		}
		lim, err := readLimits(d, limitsName)
		if err != nil {
			return err
		}
		rateKey := platform + ":" + userID
		if now-lim[rateKey] < RequestInterval.Seconds() {
			return ErrRateLimited
		}
		lim[rateKey] = now
		var refusal error
		switch {
		case now < lim["_lockout:"+platform]:
			refusal = ErrLockedOut
		case len(pending) >= MaxPendingPerPlatform:
			refusal = ErrTooManyPending
		}
		if refusal == nil {
			if code, err = p.newCode(); err != nil {
				return err
			}
			if err := p.addPending(d, pending, platform, code, userID, userName, now); err != nil {
				return err
			}
		}
		if err := writeLimits(d, limitsName, lim); err != nil {
			return err
		}
		return refusal
	})
	if err != nil {
		return "", err
	}
	return code, nil
}

func (p *Pairing) newCode() (string, error) {
	// 256 is a multiple of the alphabet's 32: a byte modulo 32 is unbiased.
	buf := make([]byte, CodeLength)
	if _, err := io.ReadFull(p.rand, buf); err != nil {
		return "", fmt.Errorf("generate a pairing code: %w", err)
	}
	for i, b := range buf {
		buf[i] = CodeAlphabet[int(b)%len(CodeAlphabet)]
	}
	return string(buf), nil
}

func (p *Pairing) addPending(d docs, pending object, platform, code, userID, userName string, now float64) error {
	salt := make([]byte, 16)
	id := make([]byte, 8)
	if _, err := io.ReadFull(p.rand, salt); err != nil {
		return fmt.Errorf("generate a pairing salt: %w", err)
	}
	if _, err := io.ReadFull(p.rand, id); err != nil {
		return fmt.Errorf("generate a pairing request id: %w", err)
	}
	raw, err := json.Marshal(pendingEntry{Hash: hashCode(code, salt), Salt: hex.EncodeToString(salt),
		UserID: userID, UserName: userName, CreatedAt: &now})
	if err != nil {
		return err
	}
	pending[hex.EncodeToString(id)] = raw
	return d.write(pendingName(platform), pending)
}

func hashCode(code string, salt []byte) string {
	sum := sha256.Sum256(append(append([]byte{}, salt...), code...))
	return hex.EncodeToString(sum[:])
}

// livePending reads platform's pending file and drops (and writes back without)
// the expired entries; an entry without a numeric created_at counts as expired,
// as upstream has it. The caller holds the lock.
func (p *Pairing) livePending(d docs, platform string, now float64) (object, error) {
	path := pendingName(platform)
	pending, err := d.read(path)
	if err != nil {
		return nil, err
	}
	dropped := false
	for id, raw := range pending {
		var e pendingEntry
		if json.Unmarshal(raw, &e) != nil || e.CreatedAt == nil || now-*e.CreatedAt > CodeTTL.Seconds() {
			delete(pending, id)
			dropped = true
		}
	}
	if dropped {
		if err := d.write(path, pending); err != nil {
			return nil, err
		}
	}
	return pending, nil
}

// Approve approves the pending request whose code this is: its user joins the
// approved list (and an already-configured <PLATFORM>_ALLOWED_USERS in .env).
// A wrong or expired code is a *CodeError and counts toward the lockout; while
// locked, every code is refused with a *LockedError.
func (p *Pairing) Approve(ctx context.Context, platform, code string) (Approval, error) {
	if err := validPlatform(platform); err != nil {
		return Approval{}, err
	}
	code = strings.ToUpper(strings.TrimSpace(code))
	p.mu.Lock()
	defer p.mu.Unlock()
	var out Approval
	err := p.locked(ctx, func(d docs) error {
		now := p.nowSeconds()
		pending, err := p.livePending(d, platform, now)
		if err != nil {
			return err
		}
		lim, err := readLimits(d, limitsName)
		if err != nil {
			return err
		}
		// Before the lookup: a valid code must not get past a lockout.
		if until := lim["_lockout:"+platform]; now < until {
			return &LockedError{Platform: platform, Until: fromSeconds(until)}
		}
		failKey := "_failures:" + platform
		id, entry, ok := matchCode(pending, code)
		if !ok {
			fails := lim[failKey] + 1
			cerr := &CodeError{Platform: platform, Code: code, Pending: len(pending), Remaining: MaxFailedApprovals - int(fails)}
			lim[failKey] = fails
			if int(fails) >= MaxFailedApprovals {
				until := now + Lockout.Seconds()
				lim["_lockout:"+platform], lim[failKey] = until, 0
				cerr.Remaining, cerr.LockedUntil = 0, fromSeconds(until)
			}
			if err := writeLimits(d, limitsName, lim); err != nil {
				return err
			}
			return cerr
		}
		delete(pending, id)
		if err := d.write(pendingName(platform), pending); err != nil {
			return err
		}
		if lim[failKey] != 0 { // the count is of failures in a row
			lim[failKey] = 0
			if err := writeLimits(d, limitsName, lim); err != nil {
				return err
			}
		}
		out.Approved = Approved{Platform: platform, UserID: entry.UserID, UserName: entry.UserName, ApprovedAt: fromSeconds(now)}
		return p.addApproved(d, out.Approved, now)
	})
	if err != nil {
		return Approval{}, err
	}
	out.Allowlist, out.AllowlistErr = p.syncAllowlistAdd(ctx, platform, out.UserID)
	return out, nil
}

// matchCode finds the pending entry of code by its salted hash, in constant
// time per entry. Entries without a hash (upstream's older plaintext ones) are
// never matched: they expire.
func matchCode(pending object, code string) (string, pendingEntry, bool) {
	ids := make([]string, 0, len(pending))
	for id := range pending {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		var e pendingEntry
		if json.Unmarshal(pending[id], &e) != nil || e.Hash == "" || e.Salt == "" {
			continue
		}
		salt, err := hex.DecodeString(e.Salt)
		if err != nil {
			continue
		}
		if subtle.ConstantTimeCompare([]byte(hashCode(code, salt)), []byte(e.Hash)) == 1 {
			return id, e, true
		}
	}
	return "", pendingEntry{}, false
}

func (p *Pairing) addApproved(d docs, a Approved, now float64) error {
	path := approvedName(a.Platform)
	approved, err := d.read(path)
	if err != nil {
		return err
	}
	raw, err := json.Marshal(approvedEntry{UserName: a.UserName, ApprovedAt: now})
	if err != nil {
		return err
	}
	approved[a.UserID] = raw
	return d.write(path, approved)
}

// Revoke removes a user from the approved list and from the platform's
// allowlist in .env. Neither holding the user is not an error: Revocation says.
func (p *Pairing) Revoke(ctx context.Context, platform, userID string) (Revocation, error) {
	if err := validPlatform(platform); err != nil {
		return Revocation{}, err
	}
	userID = strings.TrimSpace(userID)
	if userID == "" {
		return Revocation{}, errors.New("no user id given: pass the id `hermes pairing list` shows")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var out Revocation
	err := p.locked(ctx, func(d docs) error {
		path := approvedName(platform)
		approved, err := d.read(path)
		if err != nil {
			return err
		}
		if _, ok := approved[userID]; !ok {
			return nil
		}
		delete(approved, userID)
		out.Paired = true
		return d.write(path, approved)
	})
	if err != nil {
		return Revocation{}, err
	}
	out.Allowlist, out.AllowlistErr = p.syncAllowlistRemove(ctx, platform, userID)
	return out, nil
}

// ClearPending drops every pending request of platform ("" = of every
// platform) and returns how many there were.
func (p *Pairing) ClearPending(ctx context.Context, platform string) (int, error) {
	if platform != "" {
		if err := validPlatform(platform); err != nil {
			return 0, err
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	err := p.locked(ctx, func(d docs) error {
		platforms := []string{platform}
		if platform == "" {
			var err error
			if platforms, err = d.platforms("pending"); err != nil {
				return err
			}
		}
		for _, pl := range platforms {
			path := pendingName(pl)
			pending, err := d.read(path)
			if err != nil {
				return err
			}
			if len(pending) == 0 {
				continue
			}
			n += len(pending)
			if err := d.write(path, object{}); err != nil {
				return err
			}
		}
		return nil
	})
	return n, err
}

// readLimits reads _rate_limits.json: "<platform>:<user>" → last request,
// "_lockout:<platform>" → locked until, "_failures:<platform>" → failures in a
// row; times are Unix seconds, as upstream writes them.
func readLimits(d docs, name string) (map[string]float64, error) {
	obj, err := d.read(name)
	if err != nil {
		return nil, err
	}
	out := make(map[string]float64, len(obj))
	for k, raw := range obj {
		var v float64
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, &MalformedError{Path: d.where(name), Err: fmt.Errorf("%q is %s, want a number", k, raw)}
		}
		out[k] = v
	}
	return out, nil
}

func writeLimits(d docs, name string, lim map[string]float64) error {
	obj := make(object, len(lim))
	for k, v := range lim {
		raw, err := json.Marshal(v)
		if err != nil {
			return err
		}
		obj[k] = raw
	}
	return d.write(name, obj)
}

// PairingOptions configure OpenPairing.
type PairingOptions struct {
	Home  string              // HERMES_HOME
	Env   func(string) string // the process environment
	Clock func() time.Time    // nil: clock.Now
	// Platforms names the allowlist variables of platforms that do not use
	// the defaults (a plugin's register_platform allowed_users_env).
	Platforms map[string]PlatformEnv
	Rand      io.Reader // nil: crypto/rand
	// State keeps the documents instead of $HERMES_HOME/platforms/pairing/
	// (pgstore's table, shared by a cluster's processes); nil: the files.
	State session.DocStore
}

// OpenPairing opens HERMES_HOME's pairing store, merging the files of the
// legacy $HERMES_HOME/pairing/ directory in first.
func OpenPairing(ctx context.Context, o PairingOptions) (*Pairing, error) {
	return openPairing(ctx, o, newEnvView(o.Env, filepath.Join(o.Home, ".env")))
}

func openPairing(ctx context.Context, o PairingOptions, env *envView) (*Pairing, error) {
	if o.Home == "" {
		return nil, errors.New("no HERMES_HOME for the pairing store")
	}
	files := &storeDir{dir: filepath.Join(o.Home, "platforms", "pairing")}
	p := &Pairing{
		store:    files,
		files:    files,
		env:      env,
		names:    envNames(o.Platforms),
		now:      o.Clock,
		rand:     o.Rand,
		approved: map[string]approvedCache{},
	}
	if p.now == nil {
		p.now = clock.Now
	}
	if p.rand == nil {
		p.rand = rand.Reader
	}
	if o.State != nil {
		p.store, p.files = o.State, nil
		return p, nil
	}
	legacy := filepath.Join(o.Home, "pairing")
	if _, err := os.Stat(legacy); err == nil {
		if err := files.locked(ctx, func() error { return files.mergeLegacy(legacy) }); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func envNames(registered map[string]PlatformEnv) func(string) PlatformEnv {
	custom := make(map[string]PlatformEnv, len(registered))
	for name, e := range registered {
		custom[strings.ToLower(strings.TrimSpace(name))] = e
	}
	return func(platform string) PlatformEnv {
		d := DefaultPlatformEnv(platform)
		c, ok := custom[platform]
		if !ok {
			return d
		}
		if c.AllowedUsers != "" {
			d.AllowedUsers = c.AllowedUsers
		}
		if c.AllowAll != "" {
			d.AllowAll = c.AllowAll
		}
		if c.AllowedRoles != "" {
			d.AllowedRoles = c.AllowedRoles
		}
		return d
	}
}
