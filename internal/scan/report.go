package scan

import (
	"fmt"
	"sort"
	"strings"
)

var sevOrder = map[string]int{sevCritical: 0, sevHigh: 1, sevMedium: 2, sevLow: 3}

// Decision is the plugin install policy for a verdict (upstream
// should_allow_plugin_install): safe installs, caution needs confirmation or --force,
// dangerous is blocked whatever the flags.
type Decision int

const (
	Allow Decision = iota
	NeedsConfirmation
	Block
)

// Policy returns the install decision and upstream's reason text.
func (r *Result) Policy(force bool) (Decision, string) {
	n := len(r.Findings)
	switch r.Verdict {
	case VerdictSafe:
		return Allow, "Allowed (clean scan)"
	case VerdictCaution:
		if force {
			return Allow, fmt.Sprintf("Force-installed despite caution verdict (%d findings)", n)
		}
		return NeedsConfirmation, fmt.Sprintf("Requires confirmation (caution verdict, %d findings)", n)
	}
	return Block, fmt.Sprintf("Blocked (dangerous verdict, %s). --force does not override a dangerous verdict.",
		r.blockingSummary())
}

// blockingSummary is v8's "N critical of M findings (<pattern_ids>)".
func (r *Result) blockingSummary() string {
	b := r.Blocking()
	ids := map[string]bool{}
	for _, f := range b {
		ids[f.PatternID] = true
	}
	list := make([]string, 0, len(ids))
	for id := range ids {
		list = append(list, id)
	}
	sort.Strings(list)
	s := fmt.Sprintf("%d critical of %d findings", len(b), len(r.Findings))
	if len(list) > 0 {
		s += " (" + strings.Join(list, ", ") + ")"
	}
	return s
}

// Blocking returns the findings that make the verdict dangerous (the critical ones).
func (r *Result) Blocking() []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.Severity == sevCritical {
			out = append(out, f)
		}
	}
	return out
}

// Sorted returns the findings ordered critical → low, stable within a severity.
func (r *Result) Sorted() []Finding {
	out := append([]Finding(nil), r.Findings...)
	sort.SliceStable(out, func(i, j int) bool { return sevOrder[out[i].Severity] < sevOrder[out[j].Severity] })
	return out
}

// Report is upstream's format_scan_report: a header with name, source, trust and
// verdict, one line per finding sorted critical → low, and the decision line. The
// decision uses the plugin policy (caution asks, dangerous blocks); upstream printed
// the skills policy there, which called every caution plugin "BLOCKED".
func (r *Result) Report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Scan: %s (%s/community)  Verdict: %s\n", r.Name, r.Source, strings.ToUpper(r.Verdict))
	if len(r.Findings) > 0 {
		for _, f := range r.Sorted() {
			loc := fmt.Sprintf("%s:%d", f.File, f.Line)
			fmt.Fprintf(&b, "  %-8s %-14s %-30s \"%s\"\n", strings.ToUpper(f.Severity), f.Category, loc, runePrefix(f.Match, 60))
		}
		b.WriteString("\n")
	}
	d, reason := r.Policy(false)
	status := map[Decision]string{Allow: "ALLOWED", NeedsConfirmation: "NEEDS CONFIRMATION", Block: "BLOCKED"}[d]
	fmt.Fprintf(&b, "Decision: %s — %s", status, reason)
	return b.String()
}

func runePrefix(s string, n int) string {
	i := 0
	for k := range s {
		if i == n {
			return s[:k]
		}
		i++
	}
	return s
}
