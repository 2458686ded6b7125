package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hermes-go/hermes/internal/app"
	"github.com/hermes-go/hermes/internal/skills"
)

func newCmdSkills(f *app.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "skills",
		Short: "List and show the skills the model can load (yours in $HERMES_HOME/skills, and enabled plugins')",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newCmdSkillsList(f, nil), newCmdSkillsShow(f, nil))
	return cmd
}

type skillsListOptions struct {
	IO       *app.IOStreams
	WithHost withHost
	Color    func() bool

	JSON bool
}

type skillRow struct {
	Name        string           `json:"name"`
	Category    string           `json:"category"`
	Source      string           `json:"source"` // "user" or "plugin:<namespace>"
	Status      string           `json:"status"` // "ok", "withheld" (injection findings) or "broken"
	Problem     string           `json:"problem,omitempty"`
	Findings    []skills.Finding `json:"findings,omitempty"`
	Description string           `json:"description"`
	Path        string           `json:"path"`
}

func newCmdSkillsList(f *app.Factory, runF func(*skillsListOptions) error) *cobra.Command {
	opts := &skillsListOptions{IO: f.IO, WithHost: f.WithHost, Color: f.Color}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List skills: yours, then those of enabled plugins (addressed as namespace:skill)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return skillsListRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "machine-readable output")
	return cmd
}

// skillRows describes every skill, scanning each SKILL.md as skill_view would.
func skillRows(ctx context.Context, c *skills.Catalog) ([]skillRow, error) {
	user, err := c.User()
	if err != nil {
		return nil, err
	}
	rows := []skillRow{}
	for _, s := range append(user, c.Plugin()...) {
		r := skillRow{Name: s.Name, Category: s.Category, Source: "user", Status: "ok", Description: s.Description, Path: s.Path}
		if s.Plugin != "" {
			r.Source = "plugin:" + s.Plugin
		}
		switch f, err := skills.Injection(ctx, s.Path); {
		case s.Problem != "":
			r.Status, r.Problem = "broken", s.Problem
		case err != nil:
			r.Status, r.Problem = "broken", err.Error()
		case len(f) > 0:
			r.Status, r.Findings = "withheld", f
			r.Problem = "prompt-injection findings: " + findingList(f)
		}
		rows = append(rows, r)
	}
	return rows, nil
}

func findingList(fs []skills.Finding) string {
	var out []string
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%s (line %d)", f.PatternID, f.Line))
	}
	return strings.Join(out, ", ")
}

func skillsListRun(ctx context.Context, opts *skillsListOptions) error {
	return opts.WithHost(ctx, func(h *app.Host) error {
		c := h.Skills()
		rows, err := skillRows(ctx, c)
		if err != nil {
			return app.Failf("Error: %v", err)
		}
		out := opts.IO.Out
		if opts.JSON {
			return writeJSON(out, rows)
		}
		if len(rows) == 0 {
			sayf(out, "No skills. Add one as %s/<name>/SKILL.md, or enable a plugin that provides skills.\n", c.UserDir)
			return nil
		}
		t := &table{color: opts.Color()}
		t.header("Name", "Category", "Source", "Status", "Description")
		for _, r := range rows {
			desc := r.Description
			if r.Problem != "" {
				desc = r.Problem
			}
			t.row(r.Name, r.Category, r.Source, r.Status, truncate(desc, 70))
			if r.Status != "ok" {
				t.paintLast(3, ansiRed)
			}
		}
		t.write(out)
		for _, r := range rows {
			switch r.Status {
			case "withheld":
				sayf(opts.IO.Err, "Warning: skill %s is withheld from the model (%s); review %s\n", r.Name, r.Problem, r.Path)
			case "broken":
				sayf(opts.IO.Err, "Warning: skill %s cannot be loaded: %s; fix %s\n", r.Name, r.Problem, r.Path)
			}
		}
		return nil
	})
}

type skillsShowOptions struct {
	IO       *app.IOStreams
	WithHost withHost

	Name string
}

func newCmdSkillsShow(f *app.Factory, runF func(*skillsShowOptions) error) *cobra.Command {
	opts := &skillsShowOptions{IO: f.IO, WithHost: f.WithHost}
	cmd := &cobra.Command{
		Use:     "show NAME",
		Short:   "Show a skill's SKILL.md and whether the model may load it",
		Example: "  hermes skills show git-flow\n  hermes skills show agent-plugin-demo-1a2b3c4d:review",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(opts)
			}
			return skillsShowRun(cmd.Context(), opts)
		},
	}
	return cmd
}

func skillsShowRun(ctx context.Context, opts *skillsShowOptions) error {
	return opts.WithHost(ctx, func(h *app.Host) error {
		c := h.Skills()
		s, err := c.Find(opts.Name)
		if errors.Is(err, skills.ErrNotFound) {
			return app.Failf("Error: no skill named %q. List them with: hermes skills list", opts.Name)
		}
		if err != nil {
			return app.Failf("Error: %v", err)
		}
		out, errw := opts.IO.Out, opts.IO.Err
		sayf(out, "Skill:       %s\n", s.Name)
		if s.Plugin != "" {
			sayf(out, "Source:      plugin:%s\n", s.Plugin)
		} else {
			sayf(out, "Source:      user\n")
		}
		if s.Description != "" {
			sayf(out, "Description: %s\n", s.Description)
		}
		if s.Version != "" {
			sayf(out, "Version:     %s\n", s.Version)
		}
		sayf(out, "Path:        %s\n", s.Path)
		if s.Problem != "" {
			sayf(errw, "Warning: the model cannot load this skill: %s; fix %s\n", s.Problem, s.Path)
		}
		content, err := s.Read(ctx, "")
		if err != nil {
			return app.Failf("Error: %v", err)
		}
		if len(content.Findings) > 0 {
			sayf(errw, "Warning: withheld from the model: prompt-injection findings: %s. Review the text below before trusting it.\n", findingList(content.Findings))
		}
		sayf(out, "\n")
		fmt.Fprint(out, safeText(content.Text))
		if !strings.HasSuffix(content.Text, "\n") {
			fmt.Fprintln(out)
		}
		return nil
	})
}
