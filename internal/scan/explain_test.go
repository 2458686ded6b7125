package scan

import (
	"reflect"
	"strings"
	"testing"
)

func TestFindingSteps(t *testing.T) {
	tests := []struct {
		name string
		f    Finding
		want []Step
	}{
		{name: "no chain: the finding itself", f: Finding{File: "a.py", Line: 3, Description: "runs curl | sh"},
			want: []Step{{File: "a.py", Line: 3, What: "runs curl | sh"}}},
		{name: "chain", f: Finding{Chain: []string{"reads ~/.netrc (paths.py:12)", "passed to f() (x) (net(copy).py:30)"}},
			want: []Step{{File: "paths.py", Line: 12, What: "reads ~/.netrc"}, {File: "net(copy).py", Line: 30, What: "passed to f() (x)"}}},
		{name: "a step without a place", f: Finding{Chain: []string{"reads the whole environment", "x (y:z)"}},
			want: []Step{{What: "reads the whole environment"}, {What: "x (y:z)"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.f.Steps(); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Steps() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestAdvice(t *testing.T) {
	tests := []struct {
		f    Finding
		want []string
	}{
		{Finding{PatternID: idPySourceToNetwork, Severity: sevCritical, Category: "exfiltration"}, []string{"Do not install", "requires_env"}},
		{Finding{PatternID: "curl_pipe_shell", Severity: sevHigh, Category: "supply_chain"}, []string{"Review before installing", "declare it as a dependency"}},
		{Finding{PatternID: "made_up", Severity: sevHigh, Category: "made_up"}, []string{"Review before installing", "review the code"}},
	}
	for _, tt := range tests {
		got := Advice(tt.f)
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("Advice(%s) = %q, want it to say %q", tt.f.PatternID, got, w)
			}
		}
	}
}

func TestExplainedIsCriticalAndHighWorstFirst(t *testing.T) {
	r := &Result{Findings: []Finding{{PatternID: "m", Severity: sevMedium}, {PatternID: "h", Severity: sevHigh}, {PatternID: "c", Severity: sevCritical}}}
	var ids []string
	for _, f := range r.Explained() {
		ids = append(ids, f.PatternID)
	}
	if strings.Join(ids, ",") != "c,h" {
		t.Fatalf("Explained() = %v, want c,h", ids)
	}
}
