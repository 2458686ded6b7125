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
func BenchmarkPipeEchoPython(b *testing.B) {
	info, err := ProbePython(context.Background(), ChooseInterpreter("", os.Getenv), os.Getenv, b.TempDir(), b.TempDir())
	if err != nil {
		b.Skip(err)
	}
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
	defer func() { toW.Close(); _ = cmd.Wait() }()
	br := bufio.NewReader(fromR)
	line := []byte(`{"jsonrpc":"2.0","id":1,"method":"tool.call","params":{"handle":"h1","args":{"name":"Ada"}}}` + "\n")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := toW.Write(line); err != nil {
			b.Fatal(err)
		}
		if _, err := br.ReadSlice('\n'); err != nil {
			b.Fatal(err)
		}
	}
}
