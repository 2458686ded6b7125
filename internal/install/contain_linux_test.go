package install

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hermes-go/hermes/internal/reaper"
	"github.com/hermes-go/hermes/internal/testutil/procs"
)

// silentServer accepts connections and never answers, as a hung git host; it
// reports each connection on accepted.
func silentServer(t *testing.T) (addr string, accepted <-chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan struct{}, 16)
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String(), ch
}

// TestInstallLeavesNoGitHelper: an install from a server that never answers,
// timed out or interrupted, leaves no git (nor its git-remote-http) running,
// whether git's cell is a cgroup, a subreaper's or just its process group.
func TestInstallLeavesNoGitHelper(t *testing.T) {
	for _, mode := range []struct {
		name string
		opts *reaper.Options
	}{
		{"cgroup", &reaper.Options{}},
		{"subreaper", &reaper.Options{NoCgroups: true}},
		{"process group", nil},
	} {
		for _, end := range []string{"timeout", "interrupt"} {
			t.Run(mode.name+"/"+end, func(t *testing.T) {
				addr, accepted := silentServer(t)
				var r *reaper.Reaper
				if mode.opts != nil {
					r = reaper.New(*mode.opts)
					defer r.Close()
				}
				in, _ := newInstaller(t, testEnv(t, nil))
				in.Git.Reaper = r
				marker := procs.NewMarker() // in the URL, so in git's and its helper's argv
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				if end == "timeout" {
					ctx, cancel = context.WithTimeout(ctx, 500*time.Millisecond)
					defer cancel()
				} else {
					go func() {
						select {
						case <-accepted: // the helper is connected and waiting
						case <-time.After(10 * time.Second):
						}
						cancel()
					}()
				}
				errc := make(chan error, 1)
				go func() {
					_, err := in.Install(ctx, Request{Identifier: "http://" + addr + "/" + marker + ".git"})
					errc <- err
				}()
				select {
				case err := <-errc:
					// A timeout is git's failure; an interrupt says it was interrupted.
					want := "git"
					if end == "interrupt" {
						want = "interrupted"
					}
					if err == nil || !strings.Contains(err.Error(), want) {
						t.Fatalf("install from a silent server: %v, want an error saying %q", err, want)
					}
				case <-time.After(time.Minute):
					t.Fatal("install did not return after its context ended")
				}
				procs.NoneMarked(t, marker, 5*time.Second)
			})
		}
	}
}
