package scan

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

// manifestEnv is plugin.yaml's requires_env in dir (as the CLI passes it): names or
// {name: ...} entries; none when there is no manifest.
func manifestEnv(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "plugin.yaml"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		t.Fatal(err)
	}
	var m struct {
		RequiresEnv []any `yaml:"requires_env"`
	}
	if err := yaml.Unmarshal(b, &m); err != nil {
		return nil // a broken manifest is not the scanner's business
	}
	var out []string
	for _, e := range m.RequiresEnv {
		switch v := e.(type) {
		case string:
			out = append(out, v)
		case map[string]any:
			if n, ok := v["name"].(string); ok {
				out = append(out, n)
			}
		}
	}
	return out
}

// corpusSample is one labelled plugin under testdata/corpus/<family>/<sample>/.
type corpusSample struct {
	family, name, dir, want string
}

// corpusSamples lists the labelled samples: a directory holding expect.txt, whose
// first word is the expected verdict (dangerous marks a malicious sample; safe or
// caution a benign one).
func corpusSamples(t *testing.T, root string) []corpusSample {
	t.Helper()
	var out []corpusSample
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || d.Name() != "expect.txt" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fields := strings.Fields(string(b))
		if len(fields) == 0 {
			return fmt.Errorf("%s: empty; want a verdict (safe, caution or dangerous)", p)
		}
		want := fields[0]
		if want != VerdictSafe && want != VerdictCaution && want != VerdictDangerous {
			return fmt.Errorf("%s: verdict %q; want safe, caution or dangerous", p, want)
		}
		dir := filepath.Dir(p)
		rel, _ := filepath.Rel(root, dir)
		fam, name, _ := strings.Cut(filepath.ToSlash(rel), "/")
		out = append(out, corpusSample{family: fam, name: name, dir: dir, want: want})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].dir < out[j].dir })
	return out
}

// issueFamily maps a corpus directory to the family of issue 18's list it samples.
// Every directory must be listed, so a new one is classified when it is added.
var issueFamily = map[string]string{
	"shell-reverse":       "reverse shells",
	"py-obfuscation":      "obfuscated execution",
	"shell-obfuscation":   "obfuscated execution",
	"py-credential-theft": "credential theft",
	"py-persistence":      "persistence",
	"py-destruction":      "destruction",
	"py-supply-chain":     "supply chain",
	"shell-supply-chain":  "supply chain",
	"binary":              "supply chain",
	"py-self-granting":    "self-granting",
	"docs-injection":      "injection",
	"false-alarm":         "false alarms",
}

// Issue 18 part 6's floor, and the false alarms it names: a sample of each.
const (
	minMalicious = 40
	minBenign    = 20
)

var wantFalseAlarms = map[string][]string{
	"a guard's deny-list":            {"guard-denylist-set", "py-guard-blocked-genexp-join", "py-guard-denylist-join"},
	"docs explaining an injection":   {"readme-explains-injection", "skill-md-quotes-attack", "tool-description-quotes-attack"},
	"a tool name inside a name":      {"name-socat-helper", "name-mkfs-docs-plugin"},
	"an honest plugin's own secrets": {"py-provider-declared-key"},
}

// TestLabelledCorpus (issue 18 part 6): every malicious sample scans dangerous, no
// benign one does; at least 40 malicious and 20 benign samples, every family of the
// issue's list sampled. The confusion matrix and each family's counts are logged.
func TestLabelledCorpus(t *testing.T) {
	samples := corpusSamples(t, filepath.Join("testdata", "corpus"))
	checkCorpusCoverage(t, samples)
	py := testPython(t)
	var tp, fn, tn, fp int
	fam := map[string][2]int{}
	var wrongExact []string
	for _, s := range samples {
		res, err := Scan(context.Background(), s.dir, Options{Source: "corpus", Python: py, RequiresEnv: manifestEnv(t, s.dir)})
		if err != nil {
			t.Fatalf("%s/%s: %v", s.family, s.name, err)
		}
		malicious := s.want == VerdictDangerous
		got := res.Verdict == VerdictDangerous
		c := fam[s.family]
		if malicious {
			c[0]++
		} else {
			c[1]++
		}
		fam[s.family] = c
		switch {
		case malicious && got:
			tp++
		case malicious:
			fn++
			t.Errorf("malicious sample %s/%s scanned %s, want dangerous\n%s", s.family, s.name, res.Verdict, res.Report())
		case got:
			fp++
			t.Errorf("benign sample %s/%s scanned dangerous\n%s", s.family, s.name, res.Report())
		default:
			tn++
		}
		if res.Verdict != s.want {
			wrongExact = append(wrongExact, fmt.Sprintf("%s/%s: %s (expect.txt: %s)", s.family, s.name, res.Verdict, s.want))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "confusion matrix over %d samples (%d malicious, %d benign):\n", len(samples), tp+fn, tn+fp)
	fmt.Fprintf(&b, "                    scanned dangerous   scanned not dangerous\n")
	fmt.Fprintf(&b, "  malicious         %17d   %21d\n", tp, fn)
	fmt.Fprintf(&b, "  benign            %17d   %21d\n", fp, tn)
	names := make([]string, 0, len(fam))
	for n := range fam {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "  family %-28s malicious %2d  benign %2d\n", n, fam[n][0], fam[n][1])
	}
	if len(wrongExact) > 0 {
		fmt.Fprintf(&b, "verdicts other than expect.txt's (not failures unless they cross dangerous):\n  %s\n", strings.Join(wrongExact, "\n  "))
	}
	t.Log(b.String())
}

func checkCorpusCoverage(t *testing.T, samples []corpusSample) {
	t.Helper()
	mal := map[string]int{}
	var nm, nb int
	byName := map[string]corpusSample{}
	for _, s := range samples {
		fam, ok := issueFamily[s.family]
		if !ok {
			t.Errorf("corpus directory %s is not in issueFamily: add it with the issue 18 family it samples", s.family)
		}
		byName[s.name] = s
		if s.want == VerdictDangerous {
			nm++
			mal[fam]++
		} else {
			nb++
		}
	}
	if nm < minMalicious || nb < minBenign {
		t.Errorf("corpus has %d malicious and %d benign samples, want at least %d and %d", nm, nb, minMalicious, minBenign)
	}
	for _, fam := range []string{"reverse shells", "obfuscated execution", "credential theft", "persistence", "destruction", "supply chain", "self-granting"} {
		if mal[fam] == 0 {
			t.Errorf("no malicious sample of the family %q (issue 18's list)", fam)
		}
	}
	for kind, names := range wantFalseAlarms {
		for _, n := range names {
			if s, ok := byName[n]; !ok || s.want == VerdictDangerous {
				t.Errorf("false alarm %q: benign sample %s missing", kind, n)
			}
		}
	}
}

// TestRepoPluginsScanSafe: the repo's example plugins and every test plugin outside
// the scanner's own labelled samples scan safe.
func TestRepoPluginsScanSafe(t *testing.T) {
	root := filepath.Join("..", "..")
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "bench":
				return filepath.SkipDir
			}
			// The scanner's own samples are malicious on purpose.
			if filepath.ToSlash(p) == "../../internal/scan/testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Name() == "plugin.yaml" {
			dirs = append(dirs, filepath.Dir(p))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 3 {
		t.Fatalf("found %d plugin dirs under the repo, want at least the three examples: %v", len(dirs), dirs)
	}
	for _, d := range dirs {
		res, err := Scan(context.Background(), d, Options{Python: testPython(t), RequiresEnv: manifestEnv(t, d)})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != VerdictSafe {
			t.Errorf("%s scanned %s, want safe\n%s", d, res.Verdict, res.Report())
		}
	}
	t.Logf("%d plugin dirs scanned safe: %s", len(dirs), strings.Join(dirs, " "))
}
