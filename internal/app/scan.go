package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/hermes-go/hermes/internal/config"
	"github.com/hermes-go/hermes/internal/install"
	"github.com/hermes-go/hermes/internal/plugins/runtime"
	"github.com/hermes-go/hermes/internal/scan"
)

// InstallScanner is the security scan install and update run on a staged
// plugin before it is published (internal/scan), for f.Installer: with the
// Python analysis run by the interpreter Python plugins run with.
func (f *Factory) InstallScanner() install.Scanner {
	return install.ScannerFunc(func(ctx context.Context, dir string, t install.ScanTarget) (*install.ScanReport, error) {
		return scanForInstall(ctx, dir, t, f.ScanPython(ctx))
	})
}

// ScanPython is the interpreter for the scanner's Python analysis: the one the
// plugin host chooses (plugins.python, HERMES_PYTHON, python3), resolved past a
// launcher shim by the same cached probe, so a scan costs one interpreter start
// and never a pyenv shim's. A probe that fails leaves the chosen name: the scan
// then reports that the analysis could not run.
func (f *Factory) ScanPython(ctx context.Context) string {
	configured := ""
	if store, err := f.Store(); err == nil {
		if doc, err := store.Load(); err == nil {
			if s, _ := config.Plugins(doc); s.Python != "" {
				configured = s.Python
			}
		}
	}
	interp := runtime.ChooseInterpreter(configured, f.Env)
	h, err := f.Home()
	if err != nil {
		return interp
	}
	info, err := runtime.ProbePython(ctx, f.procs, interp, f.Env, h.CacheDir(), f.Cwd)
	if err != nil {
		return interp
	}
	return info.Executable
}

// scanForInstall shapes internal/scan's result as the installer reads it.
func scanForInstall(ctx context.Context, dir string, t install.ScanTarget, python string) (*install.ScanReport, error) {
	res, err := scan.Scan(ctx, dir, scan.Options{RequiresEnv: t.RequiresEnv, Source: t.Source, Python: python})
	if err != nil {
		return nil, err
	}
	if t.Name != "" {
		res.Name = t.Name
	}
	rep := &install.ScanReport{Verdict: res.Verdict, Report: res.Report(), Findings: len(res.Findings)}
	for _, f := range res.Blocking() {
		rep.Blocking = append(rep.Blocking, fmt.Sprintf("%s %s %s:%d %s (%s)", strings.ToUpper(f.Severity), f.PatternID, f.File, f.Line, f.Description, f.Match))
	}
	return rep, nil
}
