package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/termsafe"
)

// configState is what a command learnt of config.yaml.
type configState struct {
	doc *config.Doc // config.yaml as migrate parsed it, for the next plugin host
	// migrationUnsaved: the config migration could not be saved and is applied in
	// memory for this command (see migrate).
	migrationUnsaved bool
	warned           bool // the file's warnings were shown (once per command)
}

// Store is config.yaml of this command's HERMES_HOME.
func (f *Factory) Store() (config.Store, error) {
	h, err := f.Home()
	if err != nil {
		return config.Store{}, err
	}
	return config.Store{Path: h.ConfigPath(), PluginsDir: h.PluginsDir()}, nil
}

// migrateLockWait bounds how long a command waits for the config lock to save the
// migration; writers hold it for milliseconds, so a longer wait means something is
// stuck, and the command goes on with the migration applied in memory.
const migrateLockWait = 2 * time.Second

// migrate brings an existing config.yaml up to the current schema (v21: plugins are
// opt-in; existing user plugins are grandfathered into plugins.enabled). A missing
// file is a fresh install and is left alone.
//
// When the migrated file cannot be saved (a read-only HERMES_HOME, the lock held by
// something else) the command still runs: the migration is applied in memory, for
// this command only, and one warning says why it was not saved. Edits of a file that
// cannot be written fail anyway when they try to write.
func (f *Factory) migrate(ctx context.Context) error {
	f.cfg.doc = nil
	h, err := f.Home()
	if err != nil {
		return err
	}
	if _, err := os.Stat(h.ConfigPath()); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	store := config.Store{Path: h.ConfigPath()}
	doc, err := store.Load()
	if err != nil {
		return err
	}
	f.WarnConfig(doc)
	if v, ok := doc.Get("_config_version"); ok {
		if n, ok := toInt(v); ok && n >= config.LatestVersion {
			f.cfg.doc = doc // up to date: the manager reuses this parse
			return nil
		}
	}
	if f.cfg.migrationUnsaved {
		// Saving already failed once in this command: no second wait, no second warning.
		if _, err := config.Migrate(doc, h.PluginsDir()); err != nil {
			return err
		}
		f.cfg.doc = doc
		return nil
	}
	var msgs []string
	var migErr error
	lockCtx, cancel := context.WithTimeout(ctx, migrateLockWait)
	defer cancel()
	err = store.Update(lockCtx, func(d *config.Doc) error {
		msgs, migErr = config.Migrate(d, h.PluginsDir())
		return migErr
	})
	var pe *config.ParseError
	switch {
	case err == nil:
		for _, m := range msgs {
			fmt.Fprintln(f.IO.Err, termsafe.Text(m)) // they name plugins by their directories
		}
		return nil
	case errors.Is(migErr, config.ErrPluginsNotMapping):
		// Such a section enables nothing, as upstream reads it, and the manager warns
		// about it; only edits need the migration, and they report the error.
		f.cfg.doc = doc
		return nil
	case migErr != nil, ctx.Err() != nil, errors.As(err, &pe):
		return err
	}
	// The migration itself is fine; only saving it failed.
	msgs, merr := config.Migrate(doc, h.PluginsDir())
	if merr != nil {
		return merr
	}
	what := fmt.Sprintf("config version %d", config.LatestVersion)
	if len(msgs) > 0 {
		what += " (" + strings.TrimPrefix(msgs[0], "✓ ") + ")"
	}
	f.Warn(fmt.Sprintf("could not save the update of %s to %s: %v; it applies to this command only, and hermes tries again next time", h.ConfigPath(), what, err))
	f.cfg.migrationUnsaved = true
	f.cfg.doc = doc
	return nil
}

func toInt(v any) (int, bool) {
	switch x := v.(type) {
	case int:
		return x, true
	case int64:
		return int(x), true
	case uint64:
		return int(x), true
	case float64:
		return int(x), true
	}
	return 0, false
}

// WarnConfig shows, once per command, what the user should fix in config.yaml
// though it reads (a key written twice).
func (f *Factory) WarnConfig(doc *config.Doc) {
	if f.cfg.warned {
		return
	}
	f.cfg.warned = true
	for _, w := range doc.Warnings() {
		f.Warn(w)
	}
}
