package scan

import (
	"strconv"

	"github.com/hermes-go/hermes/internal/lazyre"
)

// Issue 18 part 5: `hermes plugins scan --explain` walks each critical or high
// finding step by step. Everything here comes from the plugin (file names, matched
// text, the analysis's step texts), so the CLI sanitises each field it prints.

// Step is one step of a finding's chain: what happened, and where.
type Step struct {
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	What string `json:"what"`
}

// stepAt splits the analysis's "reads ~/.aws/credentials (paths.py:11)": the text may
// hold parentheses (a call, a path), the place is the last " (file:line)".
var stepAt = lazyre.New(`^(.*) \(((?:[^ ]| [^(])+):(\d+)\)$`)

// Steps is the finding's chain, source first; a finding without a chain is one step
// (its own place and description).
func (f Finding) Steps() []Step {
	if len(f.Chain) == 0 {
		return []Step{{File: f.File, Line: f.Line, What: f.Description}}
	}
	out := make([]Step, 0, len(f.Chain))
	for _, c := range f.Chain {
		m := stepAt.FindStringSubmatch(c)
		if m == nil {
			out = append(out, Step{What: c})
			continue
		}
		n, _ := strconv.Atoi(m[3])
		out = append(out, Step{File: m[2], Line: n, What: m[1]})
	}
	return out
}

// Explained is the findings --explain walks: critical and high, worst first.
func (r *Result) Explained() []Finding {
	var out []Finding
	for _, f := range r.Sorted() {
		if f.Severity == sevCritical || f.Severity == sevHigh {
			out = append(out, f)
		}
	}
	return out
}

// adviceByID is what to do about the rules whose category says too little.
var adviceByID = map[string]string{
	"py_source_to_network":        "a secret leaves the machine. Authors: send only what the feature needs to the service the plugin names, and declare every secret it reads in plugin.yaml requires_env.",
	"env_exfiltration_correlated": "the environment or a credential file is sent out. Authors: read only the variables plugin.yaml requires_env declares, by name.",
	"py_hermes_config_write":      "the plugin edits hermes' own config.yaml or .env (granting itself settings). Authors: tell the user which setting to change instead.",
	"py_destroy_home":             "home-level files are deleted. Authors: delete only paths under the plugin's own data or cache directory.",
	"py_pip_extra_index":          "packages are installed at run time from a foreign index. Authors: declare dependencies in the package metadata (pyproject.toml).",
	"py_pip_runtime_install":      "packages are installed at run time. Authors: declare dependencies in the package metadata (pyproject.toml).",
	"native_library_load":         "the plugin loads a native library it ships; its code cannot be reviewed. Authors: ship source, or a library built reproducibly from it.",
	"py_analysis_failed":          "the Python analysis could not finish, so the code was judged by the line rules only. Authors: split very large generated files out of the plugin.",
	"py_analysis_incomplete":      "part of the Python was not analysed. Authors: keep generated or vendored code out of the plugin.",
	"py_expression_cap":           "an expression is too deeply nested to analyse. Authors: write it plainly.",
	"py_decode_bomb":              "compressed data expands far beyond its size. Authors: ship the data uncompressed or as a file.",
	"shell_reverse_shell":         "a shell is handed to a remote host. There is no honest use of this in a plugin.",
	"shell_pipe_exec":             "downloaded or decoded text is run by a shell. Authors: ship the script in the plugin, or tell the user to run the installer.",
	"symlink_escape":              "a symlink points outside the plugin. Authors: ship the file itself.",
	"binary_file":                 "a binary cannot be reviewed. Authors: ship source instead.",
}

// adviceByCategory covers the rest.
var adviceByCategory = map[string]string{
	"exfiltration":         "data is sent where the plugin has no reason to send it. Authors: send only what the feature needs, to the service the plugin names.",
	"injection":            "text addresses the model to override its instructions. Authors: if it explains an attack, quote it in a code span under a section about security.",
	"destructive":          "files outside the plugin are destroyed. Authors: delete only the plugin's own data.",
	"persistence":          "something is set to run again later without the user (start-up files, cron, services, SSH keys, hermes' config). Authors: document the step and let the user take it.",
	"network":              "a remote host gets a shell, a tunnel or a raw connection. Authors: talk to the service's API over HTTPS.",
	"obfuscation":          "code is hidden by encoding or computed names. Authors: write the call plainly; nothing honest needs hiding from a review.",
	"execution":            "commands are run. Authors: run fixed argument lists (no shell), and only what the feature needs.",
	"supply_chain":         "code that is not part of the scanned plugin is fetched and run. Authors: ship it in the plugin or declare it as a dependency.",
	"privilege_escalation": "the plugin asks for more rights than the user's. Authors: never call sudo or change permissions of system files.",
	"credential_exposure":  "a secret is written into the plugin. Authors: revoke it, and read it from a variable declared in requires_env.",
	"traversal":            "paths reach outside the plugin. Authors: keep every path under the plugin's own directories.",
	"mining":               "the plugin mines cryptocurrency. There is no honest use of this in a plugin.",
	"structural":           "the plugin's shape hides part of it from the scan. Authors: keep the plugin small and made of reviewable text.",
}

// Advice is what to do about a finding: the install consequence, why, and the
// author's fix.
func Advice(f Finding) string {
	why := adviceByID[f.PatternID]
	if why == "" {
		why = adviceByCategory[f.Category]
	}
	if why == "" {
		why = "review the code at this place."
	}
	head := "Review before installing (install asks for confirmation): "
	if f.Severity == sevCritical {
		head = "Do not install (blocked even with --force): "
	}
	return head + why
}

// Where is "file:line" (line 0: the file alone).
func (s Step) Where() string {
	switch {
	case s.File == "":
		return "(plugin)"
	case s.Line <= 0:
		return s.File
	}
	return s.File + ":" + strconv.Itoa(s.Line)
}
