package cluster

import (
	"testing"
	"time"
)

// LeaseHolder names the member running a key's item while its lease lives;
// SendUpdate queues an update for one member's role once per update id,
// sharing Enqueue's dedupe.
func TestLeaseHolderAndSendUpdate(t *testing.T) {
	url := server(t).DB(t)
	ctx := testCtx(t, time.Minute)
	n := open(t, fast(url))
	if h, err := n.LeaseHolder(ctx, "k"); err != nil || h != "" {
		t.Fatalf("holder before a claim: %q %v", h, err)
	}
	if _, err := n.Enqueue(ctx, "telegram", "1", "k", []byte("turn")); err != nil {
		t.Fatal(err)
	}
	it, err := n.Claim(ctx)
	if err != nil || it == nil {
		t.Fatalf("claim: %v %v", it, err)
	}
	if h, err := n.LeaseHolder(ctx, "k"); err != nil || h != n.ID() {
		t.Fatalf("holder while running: %q %v, want %s", h, err, n.ID())
	}
	role := MemberRole(n.ID())
	for i, want := range []bool{true, false} {
		sent, err := n.SendUpdate(ctx, "telegram", "2", role, []byte("answer"))
		if err != nil || sent != want {
			t.Fatalf("send %d: %v %v, want %v", i, sent, err, want)
		}
	}
	if queued, err := n.Enqueue(ctx, "telegram", "2", "k", nil); err != nil || queued {
		t.Fatalf("an update sent to a member was queued too: %v %v", queued, err)
	}
	if ps, err := n.PendingPayloads(ctx, role); err != nil || len(ps) != 1 || string(ps[0]) != "answer" {
		t.Fatalf("the member's actions %q %v, want the one answer", ps, err)
	}
	if err := n.Done(ctx, it); err != nil {
		t.Fatal(err)
	}
	if h, err := n.LeaseHolder(ctx, "k"); err != nil || h != "" {
		t.Fatalf("holder after done: %q %v", h, err)
	}
}
