package runtime

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"testing"
)

// echoScript is the floor a Python plugin call cannot beat: read a line from the
// host pipe, write it back, with nothing decoded or dispatched.
const echoScript = `import os
r = os.fdopen(3, "rb", buffering=1 << 16)
w = os.fdopen(4, "wb", buffering=0)
for line in iter(r.readline, b""):
    w.write(line)
`

// BenchmarkPipeEchoPython measures a bare Python line echo over the same kind of pipes
// the plugin protocol uses; BenchmarkToolCallPython is compared against it.
func BenchmarkPipeEchoPython(b *testing.B) { benchPipeEcho(b, 1) }

// BenchmarkPipeEchoPython10 is the floor of a hook fan-out to 10 plugins: one
// line written to each of 10 echo processes, then the 10 answers read. It shows
// what 10 processes cost on this machine before any protocol work
// (BenchmarkHookFanout10 in internal/plugins is compared against it).
func BenchmarkPipeEchoPython10(b *testing.B) { benchPipeEcho(b, 10) }

type echoProc struct {
	w  *os.File
	br *bufio.Reader
}

func benchPipeEcho(b *testing.B, n int) {
	info, err := ProbePython(context.Background(), ChooseInterpreter("", os.Getenv), os.Getenv, b.TempDir(), b.TempDir())
	if err != nil {
		b.Skip(err)
	}
	procs := make([]echoProc, n)
	for i := range procs {
		toR, toW, _ := os.Pipe()
		fromR, fromW, _ := os.Pipe()
		cmd := exec.Command(info.Executable, "-c", echoScript)
		cmd.ExtraFiles = []*os.File{toR, fromW}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		toR.Close()
		fromW.Close()
		b.Cleanup(func() { toW.Close(); _ = cmd.Wait() })
		procs[i] = echoProc{w: toW, br: bufio.NewReader(fromR)}
	}
	line := []byte(`{"jsonrpc":"2.0","id":1,"method":"tool.call","params":{"handle":"h1","args":{"name":"Ada"}}}` + "\n")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, p := range procs {
			if _, err := p.w.Write(line); err != nil {
				b.Fatal(err)
			}
		}
		for _, p := range procs {
			if _, err := p.br.ReadSlice('\n'); err != nil {
				b.Fatal(err)
			}
		}
	}
}
