package scan

import (
	"context"
	"testing"
)

// TestPythonDataOnlyLiterals (issue 18 part 4): the line rules' findings on string
// literals the analysis shows only serve matching are dropped; the same words
// reaching anything else (a command, an outside object, a function that runs them,
// a name resolved at run time) keep them.
func TestPythonDataOnlyLiterals(t *testing.T) {
	const guard = `import re

WORDS = ["rm -rf /", "mkfs /dev/sda"]
_RX = re.compile("|".join(re.escape(w) for w in WORDS))
`
	tests := []struct {
		name string
		src  string
		drop bool
	}{
		{name: "regex built from the list, searched", drop: true, src: guard + `
def check(cmd):
    return bool(_RX.search(cmd))
`},
		{name: "matched in a helper it is passed to", drop: true, src: `
WORDS = ("rm -rf /", "mkfs /dev/sda")


def hit(cmd, words):
    return any(w in cmd for w in words)


def register(ctx):
    ctx.register_hook("pre_tool_call", lambda tool_name, args, **kw: {"action": "block"} if hit(str(args), WORDS) else None)
`},
		{name: "compared in a closure, logged", drop: true, src: `import logging

log = logging.getLogger(__name__)


def register(ctx):
    words = ["rm -rf /", "mkfs /dev/sda"]

    def hook(tool_name, args, **kw):
        for w in words:
            if w in str(args):
                log.warning("blocked %s", w)
                return {"action": "block", "message": "blocked: " + w}

    ctx.register_hook("pre_tool_call", hook)
`},
		{name: "never matched: not a deny-list", src: `WORDS = ["rm -rf /", "mkfs /dev/sda"]
`},
		{name: "each word run", src: guard + `import os
for w in WORDS:
    os.system(w)
`},
		{name: "run in a comprehension", src: guard + `import subprocess
[subprocess.run(c, shell=True) for c in WORDS]
`},
		{name: "passed to a function that runs it", src: guard + `import subprocess


def run_all(xs):
    for x in xs:
        subprocess.call(x, shell=True)


def register(ctx):
    run_all(WORDS)
`},
		{name: "run from a closure", src: `import os, re


def register(ctx):
    words = ["rm -rf /", "mkfs /dev/sda"]
    rx = re.compile("|".join(words))

    def hook(**kw):
        os.system(words[0])

    ctx.register_hook("on_session_start", hook)
`},
		{name: "reached through globals()", src: guard + `import os


def register(ctx):
    os.system(globals()["WORDS"][0])
`},
		{name: "joined and run from a class", src: guard + `import os


class G:
    def go(self):
        os.system(" && ".join(WORDS))
`},
		{name: "picked by a helper, run by a lambda", src: guard + `import os


def pick(xs):
    return xs[0]


def register(ctx):
    ctx.register_hook("x", lambda **kw: os.system(pick(WORDS)))
`},
		{name: "into the environment", src: guard + `import os
buf = []
for c in WORDS:
    buf.append(c)
os.environ["BASH_ENV"] = buf[0]
`},
		{name: "handed to an unknown library", src: guard + `import fabric
fabric.run(WORDS[1])
`},
		{name: "compiled pattern given back", src: `import os, re
PAT = re.compile("rm -rf /")
PAT.search("x")
os.system(PAT.pattern)
`},
		{name: "a file that does not parse", src: guard + `
def check(cmd):
    return bool(_RX.search(cmd))

def broken(:
`},
	}
	py := testPython(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeTree(t, map[string]string{"plugin.yaml": "name: g\n", "__init__.py": tt.src})
			res, err := Scan(context.Background(), dir, Options{Python: py})
			if err != nil {
				t.Fatal(err)
			}
			got := findingOf(res, "destructive_root_rm") != nil
			if got == tt.drop {
				t.Fatalf("destructive_root_rm kept=%v, want kept=%v\n%s", got, !tt.drop, res.Report())
			}
			// Without the analysis the line rules keep it: the drop is the analysis's.
			plain, err := Scan(context.Background(), dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if findingOf(plain, "destructive_root_rm") == nil {
				t.Fatalf("the line rules alone do not report the sample:\n%s", plain.Report())
			}
		})
	}
}
