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

// minimalServerScript is the least a Python tool call over JSON-RPC lines can do:
// decode the request, run the seed hello-world handler (verbatim), encode its
// string result, write the line. No bridge, no threads, no checks.
const minimalServerScript = `import os, json
r = os.fdopen(3, "rb", buffering=1 << 16)
w = os.fdopen(4, "wb", buffering=0)
loads = json.loads
enc = json.encoder.encode_basestring
def handle_hello(params, **kwargs):
    del kwargs
    name = params.get("name", "World")
    return json.dumps({"success": True, "greeting": f"Hello, {name}!"})
handlers = {"h1": handle_hello}
for line in iter(r.readline, b""):
    m = loads(line)
    p = m["params"]
    res = handlers[p["handle"]](p["args"])
    w.write(('{"jsonrpc":"2.0","id":%d,"result":%s}\n' % (m["id"], enc(res))).encode())
`

// BenchmarkPipeEchoPython measures a bare Python line echo over the same kind of pipes
// the plugin protocol uses; BenchmarkToolCallPython is compared against it.
func BenchmarkPipeEchoPython(b *testing.B) { benchPipeEcho(b, 1) }

// toolCallLine is the request both floors are sent: the call BenchmarkToolCallPython makes.
const toolCallLine = `{"jsonrpc":"2.0","id":1,"method":"tool.call","params":{"handle":"h1","args":{"name":"Ada"}}}` + "\n"

const minimalServerAnswer = `{"jsonrpc":"2.0","id":1,"result":"{\"success\": true, \"greeting\": \"Hello, Ada!\"}"}` + "\n"

// BenchmarkMinimalServerPython is a hand-written 15-line Python JSON-RPC server
// answering the same tool call BenchmarkToolCallPython makes: what any Python
// plugin host must pay on this machine before its own overhead. ToolCall/Minimal
// is the bridge's overhead; Minimal/PipeEcho is what Python's own work costs.
func BenchmarkMinimalServerPython(b *testing.B) {
	benchPipeScript(b, minimalServerScript, minimalServerAnswer, 1)
}

// BenchmarkPipeEchoPython10 is the floor of a hook fan-out to 10 plugins: one
// line written to each of 10 echo processes, then the 10 answers read. It shows
// what 10 processes cost on this machine before any protocol work
// (BenchmarkHookFanout10 in internal/plugins is compared against it).
func BenchmarkPipeEchoPython10(b *testing.B) { benchPipeEcho(b, 10) }

type echoProc struct {
	w  *os.File
	br *bufio.Reader
}

func benchPipeEcho(b *testing.B, n int) { benchPipeScript(b, echoScript, toolCallLine, n) }

// benchPipeScript runs n Python processes of script and times one request line
// to each and one answer line back from each; the first answers must be want.
func benchPipeScript(b *testing.B, script, want string, n int) {
	info, err := ProbePython(context.Background(), nil, ChooseInterpreter("", os.Getenv), os.Getenv, b.TempDir(), b.TempDir())
	if err != nil {
		b.Skip(err)
	}
	procs := make([]echoProc, n)
	for i := range procs {
		toR, toW, _ := os.Pipe()
		fromR, fromW, _ := os.Pipe()
		cmd := exec.Command(info.Executable, "-c", script)
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
	line := []byte(toolCallLine)
	for _, p := range procs {
		if _, err := p.w.Write(line); err != nil {
			b.Fatal(err)
		}
		if got, err := p.br.ReadString('\n'); err != nil || got != want {
			b.Fatalf("answer %q (%v), want %q", got, err, want)
		}
	}
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
