package auth

import (
	"context"
	"os"
	"testing"

	"github.com/hermes-go/hermes/internal/session/pgstore"
	"github.com/hermes-go/hermes/internal/testutil/pgtest"
)

// With State (pgstore), the pairing flow runs on the database: a code asked
// for through one process is approved through another, and nothing is
// written under $HERMES_HOME/platforms/pairing.
func TestPairingOnPostgres(t *testing.T) {
	ctx := context.Background()
	c := pgtest.Start(t)
	u := c.DB(t)
	var homes []string
	open := func() *Pairing {
		s, err := pgstore.Open(ctx, u, pgstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		home := t.TempDir()
		homes = append(homes, home)
		p, err := OpenPairing(ctx, PairingOptions{Home: home, Env: mapEnv(nil), State: s})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	gw, cli := open(), open()
	code, err := gw.Request(ctx, "telegram", "555", "Ann")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gw.Request(ctx, "telegram", "555", "Ann"); err != ErrRateLimited {
		t.Fatalf("a second request at once: %v, want ErrRateLimited", err)
	}
	pending, err := cli.ListPending(ctx, "")
	if err != nil || len(pending) != 1 || pending[0].UserID != "555" || pending[0].Platform != "telegram" {
		t.Fatalf("ListPending = %+v, %v", pending, err)
	}
	if _, err := cli.Approve(ctx, "telegram", "WRONGCOD"); err == nil {
		t.Fatal("a wrong code was approved")
	}
	a, err := cli.Approve(ctx, "telegram", code)
	if err != nil || a.UserID != "555" {
		t.Fatalf("Approve = %+v, %v", a, err)
	}
	if ok, err := gw.IsApproved("telegram", "555"); err != nil || !ok {
		t.Fatalf("IsApproved on the other process = %v, %v", ok, err)
	}
	if list, err := gw.ListApproved(""); err != nil || len(list) != 1 || list[0].UserName != "Ann" {
		t.Fatalf("ListApproved = %+v, %v", list, err)
	}
	if r, err := cli.Revoke(ctx, "telegram", "555"); err != nil || !r.Paired {
		t.Fatalf("Revoke = %+v, %v", r, err)
	}
	if ok, _ := gw.IsApproved("telegram", "555"); ok {
		t.Fatal("still approved after Revoke")
	}
	for _, home := range homes {
		if _, err := os.Stat(pairingDir(home)); !os.IsNotExist(err) {
			t.Errorf("%s was created (%v): the state belongs in the database", pairingDir(home), err)
		}
	}
}
