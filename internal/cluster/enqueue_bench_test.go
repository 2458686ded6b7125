package cluster

import (
	"context"
	"strconv"
	"testing"
)

// BenchmarkEnqueueOneByOne is the poll owner's cost per polled update: one
// Enqueue round trip (and commit) at a time, as the poll loop queues a batch
// in order before confirming it.
func BenchmarkEnqueueOneByOne(b *testing.B) {
	url := server(b).DB(b)
	ctx := context.Background()
	n := open(b, Config{URL: url})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := n.Enqueue(ctx, "bench", strconv.Itoa(i), "chat"+strconv.Itoa(i%100), []byte(`{"update_id":1}`)); err != nil {
			b.Fatal(err)
		}
	}
}
