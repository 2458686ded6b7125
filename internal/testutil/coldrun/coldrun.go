// Package coldrun times code the way a short hermes command meets it: once, in a
// fresh process. A benchmark loop measures the warm case only; `hermes plugins
// list` runs as a new process every time, so its heap, its page tables and the
// code pages of the parser it uses are all untouched when it starts.
package coldrun

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	nameEnv = "HERMES_COLDRUN"
	argEnv  = "HERMES_COLDRUN_ARG"
	marker  = "coldrun-ns: "
)

// Func is the code a cold run times; arg is what Bench was given.
type Func func(arg string) error

// Child must be called first thing in TestMain. In a test binary started by
// Bench it runs the named function once, prints how long it took and exits;
// otherwise it returns at once.
func Child(funcs map[string]Func) {
	name, ok := os.LookupEnv(nameEnv)
	if !ok {
		return
	}
	fn := funcs[name]
	if fn == nil {
		fmt.Fprintf(os.Stderr, "coldrun: no function %q\n", name)
		os.Exit(2)
	}
	// What internal/startmem sets in the hermes binary (tests do not import it):
	// a short command never collects.
	debug.SetGCPercent(400)
	start := time.Now()
	err := fn(os.Getenv(argEnv))
	d := time.Since(start)
	if err != nil {
		fmt.Fprintf(os.Stderr, "coldrun: %s: %v\n", name, err)
		os.Exit(1)
	}
	fmt.Printf("%s%d\n", marker, d.Nanoseconds())
	os.Exit(0)
}

// Bench starts the test binary b.N times, each running the function name
// (registered with Child) once with arg, and reports the mean time of that one
// call as ns/op: the process start is left out, as it is the same whichever code
// runs. exec-ns/op is the whole child process, for reference.
func Bench(b *testing.B, name, arg string) {
	b.Helper()
	var inner, whole time.Duration
	n := 0
	for b.Loop() {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), nameEnv+"="+name, argEnv+"="+arg)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		t0 := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("cold run of %s: %v\n%s", name, err, errb.Bytes())
		}
		whole += time.Since(t0)
		d, err := parse(out.Bytes())
		if err != nil {
			b.Fatalf("cold run of %s: %v\n%s", name, err, out.Bytes())
		}
		inner += d
		n++
	}
	b.ReportMetric(float64(inner.Nanoseconds())/float64(n), "ns/op")
	b.ReportMetric(float64(whole.Nanoseconds())/float64(n), "exec-ns/op")
}

func parse(out []byte) (time.Duration, error) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), marker); ok {
			ns, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return 0, fmt.Errorf("bad timing line %q: %w", sc.Text(), err)
			}
			return time.Duration(ns), nil
		}
	}
	return 0, errors.New("the child printed no timing")
}
