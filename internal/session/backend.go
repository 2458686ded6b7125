package session

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/hermes-go/hermes/internal/llm"
)

// Backend is the whole store as both engines implement it: *Store (SQLite in
// state.db, the default) and pgstore.Store (PostgreSQL, shared by several
// gateway processes). The conformance suite (storetest) runs against this
// interface; consumers take the smaller parts they use.
type Backend interface {
	Sessions
	Messages
	Keys
	Ledger
	Usages
	// Where names the store in messages: a file's path, or a server and database.
	Where() string
	// Version is the schema version the store is at.
	Version(ctx context.Context) (int, error)
	// Now is the store's clock; SetClock replaces it (tests, seed data).
	Now() time.Time
	SetClock(now func() time.Time)
	Close() error
}

// Sessions is the sessions table: create, read, list, end, delete.
type Sessions interface {
	NewSession(ctx context.Context, sess Session) (string, error)
	Get(ctx context.Context, id string) (Session, error)
	Resolve(ctx context.Context, idOrPrefix string) (string, error)
	List(ctx context.Context, limit int) ([]Session, error)
	EndSession(ctx context.Context, id string) error
	SetTitle(ctx context.Context, id, title string) error
	SetMetadata(ctx context.Context, id string, kv map[string]any) error
	Delete(ctx context.Context, id string) error
}

// Messages is what was said in a session, its tool calls and the search.
type Messages interface {
	AppendMessage(ctx context.Context, id string, m llm.Message) (int, error)
	// AppendFrom is AppendMessage storing which incoming delivery m answers
	// (a cluster queue item's "telegram:<update_id>"): History returns it
	// as SourceID, so a redelivery tells its own turn's messages by identity.
	AppendFrom(ctx context.Context, id string, m llm.Message, sourceID string) (int, error)
	Messages(ctx context.Context, id string) ([]llm.Message, error)
	History(ctx context.Context, id string) ([]Message, error)
	RecordToolCall(ctx context.Context, id string, tc ToolCall) error
	ToolCalls(ctx context.Context, id string) ([]ToolCall, error)
	Search(ctx context.Context, term string, limit int) ([]Hit, error)
	TruncateFrom(ctx context.Context, id string, seq int) error
	LastUserSeq(ctx context.Context, id string) (int, error)
}

// Keys is the gateway's session-key index.
type Keys interface {
	BindKey(ctx context.Context, key, id, origin string) error
	LookupKey(ctx context.Context, key string) (KeyEntry, error)
	KeyMessages(ctx context.Context, key string) (string, []llm.Message, error)
	ActiveKeys(ctx context.Context, source string, since time.Time, limit int) ([]KeyEntry, error)
}

// Ledger is the gateway's delivery ledger.
type Ledger interface {
	RecordDelivery(ctx context.Context, d Delivery) (int64, error)
	DeliveryAttempt(ctx context.Context, id int64) error
	Delivered(ctx context.Context, ids ...int64) error
	// DeliverySent says whether answer id was marked sent; false for an id
	// the ledger no longer holds (pruned after a day).
	DeliverySent(ctx context.Context, id int64) (bool, error)
	UnsentDeliveries(ctx context.Context, platform string, since time.Time, maxAttempts int) ([]Delivery, error)
}

// Usages is the token usage of turns.
type Usages interface {
	RecordUsage(ctx context.Context, id string, u TurnUsage) error
	Usage(ctx context.Context, id string) ([]TurnUsage, error)
}

var _ Backend = (*Store)(nil)

// Where is the store's file.
func (s *Store) Where() string { return s.path }

// Version is the schema version of the file (PRAGMA user_version).
func (s *Store) Version(ctx context.Context) (int, error) {
	var v int
	err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v)
	return v, s.wrap("reading the schema version", err)
}

// CheckKey refuses what upstream refuses (CWE-22): a key is a name, never a
// path. Both engines check it.
func CheckKey(key string) error { return checkKey(key) }

// SearchWords splits what a user typed into the words a search must all
// find; none is an error both engines give alike.
func SearchWords(term string) []string { return strings.Fields(term) }

// NotFound is the error both engines give for a session id not in the store.
func NotFound(id string) error { return notFound(id) }

// ErrNoSearchWord is Search's error for a term without a word.
var ErrNoSearchWord = errors.New("search needs a word to look for")
