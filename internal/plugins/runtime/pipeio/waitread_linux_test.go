package pipeio

import (
	"errors"
	"io"
	"os"
	"sync"
	"testing"
	"time"
)

func newEagerPipe(t *testing.T) (*waitReader, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	wr := newWaitReader(r)
	if wr == nil {
		t.Fatal("no waitReader for a pipe")
	}
	wr.setEager(true)
	return wr, w
}

func TestWaitReaderEager(t *testing.T) {
	for _, tc := range []struct {
		name  string
		delay time.Duration // before the writer writes
	}{
		{"already there", 0},
		{"within the eager wait", 200 * time.Microsecond},
		{"after the eager wait: the poller takes over", 20 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wr, w := newEagerPipe(t)
			go func() {
				time.Sleep(tc.delay)
				_, _ = w.Write([]byte("answer\n"))
			}()
			buf := make([]byte, 64)
			n, err := wr.Read(buf)
			if err != nil || string(buf[:n]) != "answer\n" {
				t.Fatalf("Read = %q, %v", buf[:n], err)
			}
		})
	}
}

func TestWaitReaderEOFAndDeadline(t *testing.T) {
	wr, w := newEagerPipe(t)
	w.Close()
	if n, err := wr.Read(make([]byte, 8)); n != 0 || err != io.EOF {
		t.Fatalf("after the writer closed: %d, %v; want 0, EOF", n, err)
	}

	wr, _ = newEagerPipe(t)
	go func() {
		time.Sleep(5 * time.Millisecond)
		_ = wr.f.SetReadDeadline(time.Unix(1, 0)) // what Conn.kick does
	}()
	start := time.Now()
	_, err := wr.Read(make([]byte, 8))
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("kicked read: err = %v, want a deadline error", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("kicked read took %v", d)
	}
}

// Many callers waiting at once (a hook fan-out): every read completes, whether it
// got the eager wait or the poller.
func TestWaitReaderManyWaiters(t *testing.T) {
	const n = 10
	var wg sync.WaitGroup
	for i := range n {
		wr, w := newEagerPipe(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 8)
			if k, err := wr.Read(buf); err != nil || string(buf[:k]) != "ok\n" {
				t.Errorf("reader %d: %q, %v", i, buf[:k], err)
			}
		}()
		go func() {
			time.Sleep(time.Duration(i) * 300 * time.Microsecond)
			_, _ = w.Write([]byte("ok\n"))
		}()
	}
	wg.Wait()
	if got := eagerWaiters.Load(); got != 0 {
		t.Fatalf("eagerWaiters = %d after every read returned", got)
	}
}
