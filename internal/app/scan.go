package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/hermes-go/hermes/internal/install"
	"github.com/hermes-go/hermes/internal/scan"
)

// InstallScanner is the security scan install and update run on a staged
// plugin before it is published (internal/scan), for f.Installer.
var InstallScanner install.Scanner = install.ScannerFunc(scanForInstall)

// scanForInstall shapes internal/scan's result as the installer reads it.
func scanForInstall(ctx context.Context, dir string, t install.ScanTarget) (*install.ScanReport, error) {
	res, err := scan.Scan(ctx, dir, scan.Options{RequiresEnv: t.RequiresEnv, Source: t.Source})
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
