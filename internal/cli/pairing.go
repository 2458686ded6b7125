package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/hermes-go/hermes/internal/app"
	"github.com/hermes-go/hermes/internal/gateway/auth"
	"github.com/hermes-go/hermes/internal/gateway/platform"
)

func newCmdPairing(f *app.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pairing",
		Short: "Approve, list and revoke the chat users paired with the gateway",
		Long: "People the gateway does not know get a pairing code in a DM; approve it here to let them in.\n" +
			"The store is $HERMES_HOME/platforms/pairing/; codes are never stored, only their salted hashes.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newCmdPairingList(f, nil), newCmdPairingApprove(f, nil), newCmdPairingRevoke(f, nil), newCmdPairingClear(f, nil))
	return cmd
}

// pairingOptions is what every pairing verb takes.
type pairingOptions struct {
	IO    *app.IOStreams
	Open  func(ctx context.Context) (*auth.Authorizer, error)
	Color func() bool

	JSON     bool
	Platform string
	Code     string
	UserID   string
}

func newPairingOptions(f *app.Factory) *pairingOptions {
	return &pairingOptions{
		IO:    f.IO,
		Color: f.Color,
		Open: func(ctx context.Context) (*auth.Authorizer, error) {
			a, err := f.Authorizer(ctx, auth.Options{})
			if err != nil {
				return nil, app.Failf("Error: %v", err)
			}
			return a, nil
		},
	}
}

// platformArg normalises the PLATFORM argument (Telegram → telegram).
func platformArg(s string) (string, error) {
	p, err := auth.NormalizePlatform(s)
	if err != nil {
		return "", app.FlagErrorf("%v", err)
	}
	return p, nil
}

func newCmdPairingList(f *app.Factory, runF func(*pairingOptions) error) *cobra.Command {
	opts := newPairingOptions(f)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List pending pairing requests and approved users",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return pairingListRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "machine-readable output")
	return cmd
}

func pairingListRun(ctx context.Context, opts *pairingOptions) error {
	a, err := opts.Open(ctx)
	if err != nil {
		return err
	}
	pending, err := a.Pairing().ListPending(ctx, "")
	if err != nil {
		return app.Failf("Error: %v", err)
	}
	approved, err := a.Pairing().ListApproved("")
	if err != nil {
		return app.Failf("Error: %v", err)
	}
	if opts.JSON {
		if pending == nil {
			pending = []auth.Pending{}
		}
		if approved == nil {
			approved = []auth.Approved{}
		}
		return writeJSON(opts.IO.Out, struct {
			Pending  []auth.Pending  `json:"pending"`
			Approved []auth.Approved `json:"approved"`
		}{pending, approved})
	}
	out := opts.IO.Out
	if len(pending) == 0 && len(approved) == 0 {
		fmt.Fprintln(out, "No pairing data found. No one has tried to pair yet~")
		return nil
	}
	if len(pending) > 0 {
		fmt.Fprintf(out, "Pending Pairing Requests (%d):\n", len(pending))
		t := &table{color: opts.Color()}
		t.header("Platform", "Request ID", "User ID", "Name", "Age")
		for _, p := range pending {
			t.row(p.Platform, p.RequestID, p.UserID, p.UserName, strconv.Itoa(p.AgeMinutes)+"m ago")
		}
		t.write(out)
	} else {
		fmt.Fprintln(out, "No pending pairing requests.")
	}
	fmt.Fprintln(out)
	if len(approved) > 0 {
		fmt.Fprintf(out, "Approved Users (%d):\n", len(approved))
		t := &table{color: opts.Color()}
		t.header("Platform", "User ID", "Name", "Approved")
		for _, x := range approved {
			t.row(x.Platform, x.UserID, x.UserName, formatTime(x.ApprovedAt))
		}
		t.write(out)
	} else {
		fmt.Fprintln(out, "No approved users.")
	}
	return nil
}

func newCmdPairingApprove(f *app.Factory, runF func(*pairingOptions) error) *cobra.Command {
	opts := newPairingOptions(f)
	return &cobra.Command{
		Use:   "approve PLATFORM CODE",
		Short: "Approve a pairing code a user received (e.g. hermes pairing approve telegram XKGH5N7P)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := platformArg(args[0])
			if err != nil {
				return err
			}
			opts.Platform, opts.Code = p, args[1]
			if runF != nil {
				return runF(opts)
			}
			return pairingApproveRun(cmd.Context(), opts)
		},
	}
}

func pairingApproveRun(ctx context.Context, opts *pairingOptions) error {
	a, err := opts.Open(ctx)
	if err != nil {
		return err
	}
	res, err := a.Pairing().Approve(ctx, opts.Platform, opts.Code)
	var ce *auth.CodeError
	var le *auth.LockedError
	switch {
	case errors.As(err, &ce):
		msg := fmt.Sprintf("Code '%s' not found or expired for platform '%s'.\nRun 'hermes pairing list' to see pending requests.", ce.Code, ce.Platform)
		if ce.Pending == 0 {
			msg += fmt.Sprintf(" There are none on %s: check the platform name, or ask the user to message the bot again for a new code.", ce.Platform)
		}
		if !ce.LockedUntil.IsZero() {
			msg += fmt.Sprintf("\nThat was %d wrong codes in a row: approvals on %s are locked until %s.",
				auth.MaxFailedApprovals, ce.Platform, clockTime(ce.LockedUntil))
		} else {
			msg += fmt.Sprintf("\n%d more wrong code(s) in a row lock approvals on %s for %d minutes.",
				ce.Remaining, ce.Platform, int(auth.Lockout.Minutes()))
		}
		return app.Failf("%s", msg)
	case errors.As(err, &le):
		return app.Failf("Approvals on %s are locked until %s after %d wrong codes in a row; wait, then approve again (the user's code stays valid for %d minutes after it was issued).",
			le.Platform, clockTime(le.Until), auth.MaxFailedApprovals, int(auth.CodeTTL.Minutes()))
	case err != nil:
		return app.Failf("Error: %v", err)
	}
	display := res.UserID
	if res.UserName != "" {
		display = res.UserName + " (" + res.UserID + ")"
	}
	out := opts.IO.Out
	sayf(out, "Approved! User %s on %s can now use the bot~\n", display, res.Platform)
	fmt.Fprintln(out, "They'll be recognized automatically on their next message.")
	switch {
	case res.AllowlistErr != nil:
		sayf(opts.IO.Err, "Warning: the approval stands, but %s could not be updated in .env: %v\n", res.Allowlist, res.AllowlistErr)
	case res.Allowlist != "":
		sayf(out, "Added %s to %s in .env.\n", res.UserID, res.Allowlist)
	}
	return nil
}

func clockTime(t time.Time) string { return t.Local().Format("15:04:05") }

func newCmdPairingRevoke(f *app.Factory, runF func(*pairingOptions) error) *cobra.Command {
	opts := newPairingOptions(f)
	return &cobra.Command{
		Use:   "revoke PLATFORM USER_ID",
		Short: "Take a user's access away (the approved list and the platform's allowlist in .env)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := platformArg(args[0])
			if err != nil {
				return err
			}
			opts.Platform, opts.UserID = p, args[1]
			if runF != nil {
				return runF(opts)
			}
			return pairingRevokeRun(cmd.Context(), opts)
		},
	}
}

func pairingRevokeRun(ctx context.Context, opts *pairingOptions) error {
	a, err := opts.Open(ctx)
	if err != nil {
		return err
	}
	res, err := a.Pairing().Revoke(ctx, opts.Platform, opts.UserID)
	if err != nil {
		return app.Failf("Error: %v", err)
	}
	if res.AllowlistErr != nil {
		sayf(opts.IO.Err, "Warning: %s could not be updated in .env: %v\n", res.Allowlist, res.AllowlistErr)
	}
	if !res.Paired && (res.Allowlist == "" || res.AllowlistErr != nil) {
		return app.Failf("User %s not found in approved list for %s.", opts.UserID, opts.Platform)
	}
	out := opts.IO.Out
	sayf(out, "Revoked access for user %s on %s.\n", opts.UserID, opts.Platform)
	if res.Allowlist != "" && res.AllowlistErr == nil {
		sayf(out, "Removed %s from %s in .env.\n", opts.UserID, res.Allowlist)
	}
	// Say so when another rule still lets them in: revoking is meant to shut the door.
	if d := a.Check(platform.Source{Platform: opts.Platform, ChatType: platform.ChatDM, UserID: opts.UserID}); d.Allowed {
		sayf(opts.IO.Err, "Note: %s is still allowed on %s by %s.\n", opts.UserID, opts.Platform, a.Explain(opts.Platform, d.Rule))
	}
	return nil
}

func newCmdPairingClear(f *app.Factory, runF func(*pairingOptions) error) *cobra.Command {
	opts := newPairingOptions(f)
	return &cobra.Command{
		Use:   "clear-pending [PLATFORM]",
		Short: "Drop pending pairing requests (of every platform, or of PLATFORM)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				p, err := platformArg(args[0])
				if err != nil {
					return err
				}
				opts.Platform = p
			}
			if runF != nil {
				return runF(opts)
			}
			return pairingClearRun(cmd.Context(), opts)
		},
	}
}

func pairingClearRun(ctx context.Context, opts *pairingOptions) error {
	a, err := opts.Open(ctx)
	if err != nil {
		return err
	}
	n, err := a.Pairing().ClearPending(ctx, opts.Platform)
	if err != nil {
		return app.Failf("Error: %v", err)
	}
	if n == 0 {
		fmt.Fprintln(opts.IO.Out, "No pending requests to clear.")
		return nil
	}
	fmt.Fprintf(opts.IO.Out, "Cleared %d pending request(s).\n", n)
	return nil
}
