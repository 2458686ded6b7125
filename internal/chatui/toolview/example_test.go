package toolview_test

import (
	"fmt"
	"os"
	"time"

	"github.com/hermes-go/hermes/internal/chatui/toolview"
)

// A call as the chat draws it: the header while it runs, then the header and
// the summary once it ended.
func ExampleHeader() {
	c := toolview.Call{ID: "c1", Name: "terminal", Args: `{"command":"go test ./..."}`}
	fmt.Println(toolview.Header(c, 40, "⠋", false))
	c.Done, c.Duration, c.Result = true, 2*time.Minute+3*time.Second, `{"output":"ok  \tpkg\t0.2s\n","exit_code":0,"error":null}`
	fmt.Println(toolview.Header(c, 40, "", false))
	fmt.Println(toolview.Summary(c, 40, false))
	// Output:
	// ⠋ terminal go test ./...
	// ✓ terminal go test ./... · 2m03s
	// ok      pkg 0.2s
}

// The diff of a write_file call to a file that does not exist yet.
func ExampleDiff() {
	read := toolview.FileReader(os.TempDir(), os.TempDir())
	d, ok := toolview.Diff("write_file", `{"path":"no-such-dir-hermes/new.txt","content":"hello\nworld\n"}`, read, 40, false)
	fmt.Println(ok)
	fmt.Println(d)
	// Output:
	// true
	// --- /dev/null
	// +++ b/no-such-dir-hermes/new.txt
	// @@ -0,0 +1,2 @@
	// +hello
	// +world
}

func ExampleApprovalModal() {
	fmt.Println(toolview.ApprovalModal(toolview.Approval{
		Command: "rm -rf build/", Description: "recursive delete", Origin: "the model",
		Choices: toolview.Choices(false), Selected: 0,
	}, 40, false))
	// Output:
	// ╭──────────────────────────────────────╮
	// │ ⚠ Approval needed: recursive delete  │
	// │ asked by the model; the command,     │
	// │ exactly as it would run:             │
	// │                                      │
	// │ $ rm -rf build/                      │
	// │                                      │
	// │ [once]  session   always   deny      │
	// ╰──────────────────────────────────────╯
}
