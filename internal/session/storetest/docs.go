package storetest

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/hermes-go/hermes/internal/session"
)

// DocHarness opens document stores (the pairing state) of one engine.
type DocHarness struct {
	// New opens a fresh, empty store, closed when t ends.
	New func(t *testing.T) session.DocStore
	// Reopen opens another handle on d, as another process would.
	Reopen func(t *testing.T, d session.DocStore) session.DocStore
}

// RunDocs runs the document store's cases.
func RunDocs(t *testing.T, h DocHarness) {
	t.Run("ReadWrite", func(t *testing.T) { testDocsReadWrite(t, h) })
	t.Run("LockSerialises", func(t *testing.T) { testDocsLock(t, h) })
}

func testDocsReadWrite(t *testing.T, h DocHarness) {
	ctx := context.Background()
	d := h.New(t)
	if data, err := d.Docs().Read(ctx, "telegram-approved"); err != nil || data != nil {
		t.Fatalf("a missing document: %q, %v; want nil", data, err)
	}
	err := d.LockedDocs(ctx, func(tx session.DocTx) error {
		for name, data := range map[string]string{"telegram-approved": `{"1":{}}`, "_rate_limits": `{}`, "empty": ""} {
			if err := tx.Write(ctx, name, []byte(data)); err != nil {
				return err
			}
		}
		// What this lock holder wrote, it reads back.
		if got, err := tx.Read(ctx, "telegram-approved"); err != nil || string(got) != `{"1":{}}` {
			t.Errorf("read in the lock: %q, %v", got, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	other := h.Reopen(t, d)
	if got, err := other.Docs().Read(ctx, "telegram-approved"); err != nil || string(got) != `{"1":{}}` {
		t.Errorf("another handle reads %q, %v", got, err)
	}
	if got, err := other.Docs().Read(ctx, "empty"); err != nil || got == nil || len(got) != 0 {
		t.Errorf("an empty document: %q (nil %v), %v; want empty, not missing", got, got == nil, err)
	}
	names, err := other.Docs().Names(ctx)
	slices.Sort(names)
	if err != nil || !slices.Equal(names, []string{"_rate_limits", "empty", "telegram-approved"}) {
		t.Errorf("Names = %v, %v", names, err)
	}
	if d.DocWhere("telegram-approved") == "" {
		t.Error("DocWhere names nothing")
	}
	// A failed operation's writes do not stay (a database) or are each
	// whole (files): either way the document reads as one of its versions.
	boom := errors.New("boom")
	if err := d.LockedDocs(ctx, func(tx session.DocTx) error {
		if err := tx.Write(ctx, "telegram-approved", []byte(`{"2":{}}`)); err != nil {
			return err
		}
		return boom
	}); !errors.Is(err, boom) {
		t.Fatalf("LockedDocs returned %v, want fn's error", err)
	}
	if got, _ := d.Docs().Read(ctx, "telegram-approved"); string(got) != `{"1":{}}` && string(got) != `{"2":{}}` {
		t.Errorf("after a failed operation: %q", got)
	}
}

// testDocsLock: read-modify-writes from several handles at once never lose
// an update.
func testDocsLock(t *testing.T, h DocHarness) {
	ctx := context.Background()
	first := h.New(t)
	handles := []session.DocStore{first, h.Reopen(t, first), h.Reopen(t, first)}
	const each = 20
	var wg sync.WaitGroup
	for _, d := range handles {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				err := d.LockedDocs(ctx, func(tx session.DocTx) error {
					data, err := tx.Read(ctx, "counter")
					if err != nil {
						return err
					}
					n, _ := strconv.Atoi(string(data))
					return tx.Write(ctx, "counter", []byte(strconv.Itoa(n+1)))
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	got, err := first.Docs().Read(ctx, "counter")
	if err != nil || string(got) != strconv.Itoa(len(handles)*each) {
		t.Fatalf("counter %q, %v; want %d", got, err, len(handles)*each)
	}
}
