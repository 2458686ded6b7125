package app

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hermes-go/hermes/internal/catalog"
	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/install"
	"github.com/hermes-go/hermes/internal/session"
	"github.com/hermes-go/hermes/internal/termsafe"
)

// The services commands use besides the plugin host, built for this
// command's HERMES_HOME.

// Installer builds the plugin installer, with scanner as its security scan
// (nil: installs are not scanned).
func (f *Factory) Installer(scanner install.Scanner) (*install.Installer, error) {
	h, err := f.Home()
	if err != nil {
		return nil, err
	}
	g := &install.Git{Env: f.Env, Reaper: f.procs}
	in := &install.Installer{
		PluginsDir:  h.PluginsDir(),
		Git:         g,
		Credentials: &install.Credentials{Env: f.Env, DotenvPath: h.EnvPath(), Git: g, Reaper: f.procs},
		Scanner:     scanner,
		Log:         termsafe.NewWriter(f.IO.Err), // its lines quote URLs from links and indexes
	}
	if f.IO.ErrTTY {
		in.Progress = f.Spinner
	}
	return in, nil
}

// ScanOnInstall reads plugins.scan_on_install; an unreadable config keeps scanning on.
func (f *Factory) ScanOnInstall() bool {
	store, err := f.Store()
	if err != nil {
		return true
	}
	doc, err := store.Load()
	if err != nil {
		return true
	}
	s, _ := config.Plugins(doc)
	return s.ScanOnInstall
}

// Spinner shows progress on a terminal only; the returned func ends it.
func (f *Factory) Spinner(msg string) func() {
	msg = termsafe.Line(msg) // it names a repository from a link or an index
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		frames := []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for i := 0; ; i++ {
			fmt.Fprintf(f.IO.Err, "\r%s %s", frames[i%len(frames)], msg)
			select {
			case <-stop:
				fmt.Fprintf(f.IO.Err, "\r\x1b[K")
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(stop); wg.Wait() }
}

// Catalog reads the merged catalog for this HERMES_HOME: config URL overrides,
// HERMES_OFFLINE, caches under $HERMES_HOME/cache. Fetch and cache problems are
// warnings on stderr; it always returns a catalog (the embedded seed at worst).
func (f *Factory) Catalog(ctx context.Context, refresh bool) (*catalog.Catalog, error) {
	h, err := f.Home()
	if err != nil {
		return nil, err
	}
	l := &catalog.Loader{CacheDir: h.CacheDir(), Refresh: refresh, Offline: catalog.Truthy(f.Env(catalog.EnvOffline))}
	if doc, err := (config.Store{Path: h.ConfigPath()}).Load(); err == nil {
		for key, dst := range map[string]*string{catalog.IndexURLKey: &l.IndexURL, catalog.CatalogURLKey: &l.CatalogURL} {
			v, ok := doc.Get(key)
			if !ok || v == nil {
				continue
			}
			if s, ok := v.(string); ok && strings.TrimSpace(s) != "" {
				*dst = strings.TrimSpace(s)
			} else {
				f.Warn(fmt.Sprintf("%s is not a URL string; using the default", key))
			}
		}
	}
	c := l.Load(ctx)
	for _, w := range c.Warnings {
		f.Warn(w)
	}
	switch {
	case len(c.Skipped) > 0 && c.Fetched:
		for _, s := range c.Skipped {
			f.Warn(s)
		}
	case len(c.Skipped) > 0:
		f.Warn(fmt.Sprintf("%d invalid catalog/index entries were skipped (run with --refresh to see why)", len(c.Skipped)))
	}
	return c, nil
}

// KillList is the catalog's kill list as loading plugins reads it: the cached
// catalog at any age and the seed, never the network.
func (f *Factory) KillList() catalog.KillList {
	h, err := f.Home()
	if err != nil {
		return catalog.LoadKillList("")
	}
	return catalog.LoadKillList(h.CacheDir())
}

// Sessions opens the session store (gateway.store, or state.db) for the
// sessions commands. With mustExist, a missing state.db is reported as nil
// without creating it, so read-only commands leave HERMES_HOME alone.
func (f *Factory) Sessions(ctx context.Context, mustExist bool) (session.Backend, error) {
	s, err := f.OpenStore(ctx, mustExist)
	if err != nil {
		return nil, Failf("Error: %v", err)
	}
	return s, nil
}
