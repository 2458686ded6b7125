package install

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// InterruptedError is an install or update stopped by its context (Ctrl-C,
// SIGTERM): git was killed with its process group, the staging folder removed, and
// the plugins directory left as Detail says.
type InterruptedError struct {
	Detail string
	Err    error
}

func (e *InterruptedError) Error() string { return "interrupted: " + e.Detail }
func (e *InterruptedError) Unwrap() error { return e.Err }

// interrupted is err as an InterruptedError when it happened because ctx was
// cancelled; a timeout is not an interrupt and stays the error it is.
func interrupted(ctx context.Context, err error, detail string) error {
	var ie *InterruptedError
	if err == nil || !errors.Is(ctx.Err(), context.Canceled) || errors.As(err, &ie) {
		return err
	}
	return &InterruptedError{Detail: detail, Err: ctx.Err()}
}

// interruptedUpdate puts the checkout back as it was before an update that was
// interrupted while git pulled: a pull killed between writing the files and moving
// the branch leaves both half done, so the branch is reset to the commit it had
// (the tree was clean, or its edits are in the stash) and stashed edits are
// re-applied. The metadata row was not touched yet.
func (in *Installer) interruptedUpdate(ctx context.Context, dir, before string, stashed bool) error {
	cctx := context.WithoutCancel(ctx) // local and quick; a second Ctrl-C still ends hermes
	// git was killed: a lock it held is stale (the plugins-dir lock keeps other
	// hermes out, and the user's own git would not run mid-update).
	_ = os.Remove(filepath.Join(dir, ".git", "index.lock"))
	detail := "the plugin was not updated."
	if _, err := in.Git.Run(cctx, dir, nil, nil, "reset", "--hard", "--quiet", before); err != nil {
		detail = "the update was stopped halfway and the checkout could not be reset to " + before[:12] + " (" + gitMessage(err) + "); run `git -C " + dir + " status` and fix it by hand, or reinstall it."
	} else if stashed {
		detail += " " + in.reapply(cctx, dir, true)
	}
	return &InterruptedError{Detail: strings.TrimSpace(detail), Err: ctx.Err()}
}
