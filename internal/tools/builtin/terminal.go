package builtin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/hermes-go/hermes/internal/approval"
	"github.com/hermes-go/hermes/internal/reaper"
	"github.com/hermes-go/hermes/internal/tools"
)

// killGrace is how long a command gets between SIGTERM and SIGKILL.
const killGrace = 500 * time.Millisecond

func (t *toolbox) terminal(ctx context.Context, args map[string]any, kwargs map[string]any) (string, error) {
	command, err := strArg(args, "command", true)
	if err != nil {
		return badArgs(Terminal, err)
	}
	if strings.TrimSpace(command) == "" {
		return fail("invalid_arguments", "terminal: command is empty")
	}
	// Upstream's background processes (and their process registry) do not exist here;
	// say so rather than run a server in the foreground until the timeout kills it.
	if bg, _ := boolArg(args, "background"); bg {
		return fail("invalid_arguments", "terminal: background=true is not supported by this host yet; run the command in the foreground with a timeout (processes it leaves running are stopped when it exits)")
	}
	secs, err := intArg(args, "timeout", 0)
	if err != nil {
		return badArgs(Terminal, err)
	}
	timeout := t.opts.TerminalTimeout
	if secs < 0 {
		return fail("invalid_arguments", "terminal: timeout must be at least 1 second, got %d", secs)
	}
	if secs > 0 {
		timeout = time.Duration(secs) * time.Second
	}
	if timeout > MaxTerminalTimeout {
		return fail("invalid_arguments", "terminal: timeout %ds is above the maximum of %ds; split the work into shorter commands", secs, int(MaxTerminalTimeout/time.Second))
	}
	dir := t.opts.WorkDir
	if wd, err := strArg(args, "workdir", false); err != nil {
		return badArgs(Terminal, err)
	} else if wd != "" {
		dir = t.resolve(wd)
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return fail("invalid_arguments", "terminal: workdir %s is not an existing directory", wd)
		}
	}

	note, blocked := t.gate(ctx, command, kwargs)
	if blocked != "" {
		return encode(obj{{"output", ""}, {"exit_code", -1}, {"error", blocked}, {"status", "blocked"}}), nil
	}

	run := t.run(ctx, command, dir, timeout)
	output := run.output
	if t.opts.TransformOutput != nil {
		output = t.opts.TransformOutput(ctx, command, output, run.exitCode)
	}
	output = capOutput(output, t.opts.OutputCap)
	res := obj{{"output", output}, {"exit_code", run.exitCode}}
	if run.err != "" {
		res = append(res, kv{"error", run.err})
	} else {
		res = append(res, kv{"error", nil})
	}
	if note != "" {
		res = append(res, kv{"approval", note})
	}
	return encode(res), nil
}

// gate applies the guard and, for dangerous commands, the approver. It returns an
// approval note for the result, or the message of a refusal.
func (t *toolbox) gate(ctx context.Context, command string, kwargs map[string]any) (note, blocked string) {
	d := t.opts.Guard.Check(command)
	switch d.Action {
	case approval.Allow:
		return "", ""
	case approval.Block:
		return "", d.Message
	}
	desc := d.Description()
	if t.opts.Approver == nil {
		return "", fmt.Sprintf("BLOCKED: this command needs approval (%s) and no one is here to approve it. "+
			"Do NOT retry it or reach the same outcome another way. To allow it, the user can run hermes interactively "+
			"and answer the prompt, or add %s to command_allowlist in config.yaml.", desc, quoteKeys(d.PatternKeys()))
	}
	callID, _ := kwargs["tool_call_id"].(string)
	turnID, _ := kwargs["turn_id"].(string)
	origin := tools.OriginOf(ctx)
	var choice approval.Choice
	var err error
	if ca, ok := t.opts.Approver.(approval.CommandApprover); ok {
		choice, err = ca.ApproveCommand(ctx, approval.CommandRequest{Command: command, Findings: d.Findings, ToolCallID: callID, TurnID: turnID, Origin: origin})
	} else {
		choice, err = t.opts.Approver.Approve(ctx, tools.ApprovalRequest{
			ToolName: Terminal, Args: map[string]any{"command": command}, Message: desc,
			RuleKey: d.PatternKeys()[0], ToolCallID: callID, TurnID: turnID, Origin: origin,
		})
	}
	if err != nil && ctx.Err() != nil {
		return "", "BLOCKED: the approval prompt was interrupted; the command did not run."
	}
	if msg, ok := tools.BlockMessage(err); ok {
		return "", msg
	}
	if choice.Approves() {
		return fmt.Sprintf("Command required approval (%s) and was approved by the user.", desc), ""
	}
	return "", fmt.Sprintf("BLOCKED: the user denied this command (%s). The user has NOT consented to this action. "+
		"Do NOT retry this command or attempt the same outcome through another route.", desc)
}

func quoteKeys(keys []string) string {
	q := make([]string, len(keys))
	for i, k := range keys {
		q[i] = fmt.Sprintf("%q", k)
	}
	return strings.Join(q, " and ")
}

type runResult struct {
	output   string
	exitCode int
	err      string
}

// run executes command with bash in a cell of its own (a cgroup where hermes can
// make one, else its own process group watched by hermes as subreaper). On
// timeout or cancellation the process group gets SIGTERM, then the whole cell
// SIGKILL; after the shell exits, anything it left running in the cell is killed
// too, even what left the group (setsid, nohup with a double fork), so no command
// outlives its call.
func (t *toolbox) run(ctx context.Context, command, dir string, timeout time.Duration) runResult {
	pr, pw, err := os.Pipe()
	if err != nil {
		return runResult{exitCode: -1, err: "Failed to execute command: " + err.Error()}
	}
	cmd := exec.Command("bash", "-c", command)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = pw, pw
	cmd.Env = append(slices.Clip(t.opts.Environ), "PAGER=cat", "GIT_PAGER=cat")
	cmd.Env = append(cmd.Env, t.opts.Env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cell, err := t.opts.Reaper.Start(cmd)
	if err != nil {
		pr.Close()
		pw.Close()
		return runResult{exitCode: -1, err: "Failed to execute command: " + err.Error()}
	}
	pw.Close()

	capture := newHeadTail(2 * t.opts.OutputCap)
	readDone := make(chan struct{})
	go func() {
		_, _ = io.Copy(capture, pr)
		close(readDone)
	}()
	exited := make(chan error, 1)
	go func() { exited <- cell.Wait(nil) }() // kills what the shell left, then reaps it

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var reason string
	var waitErr error
	select {
	case waitErr = <-exited:
	case <-timer.C:
		reason = "timeout"
		waitErr = stopGroup(cell, exited)
	case <-ctx.Done():
		reason = "cancelled"
		waitErr = stopGroup(cell, exited)
	}
	select {
	case <-readDone:
	case <-time.After(2 * time.Second):
		// A process that escaped the group (setsid) still holds the pipe: stop reading.
	}
	pr.Close()

	res := runResult{output: capture.String(), exitCode: exitCode(cmd, waitErr)}
	switch reason {
	case "timeout":
		res.exitCode = 124
		res.err = fmt.Sprintf("Command timed out after %s; it and every process it started were killed.", timeout)
	case "cancelled":
		res.exitCode = 130
		res.err = "Command interrupted; it and every process it started were killed."
	}
	return res
}

// stopGroup sends SIGTERM to the group, then kills the whole cell if the shell
// has not exited within killGrace, and returns the shell's wait error.
func stopGroup(cell *reaper.Cell, exited <-chan error) error {
	cell.SignalGroup(syscall.SIGTERM)
	select {
	case err := <-exited:
		return err
	case <-time.After(killGrace):
	}
	cell.Kill()
	return <-exited
}

func exitCode(cmd *exec.Cmd, err error) int {
	if cmd.ProcessState == nil {
		return -1
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) || err == nil {
		return cmd.ProcessState.ExitCode()
	}
	return -1
}

// headTail keeps the first and last n bytes written to it and counts the rest, so a
// command printing gigabytes costs bounded memory.
type headTail struct {
	mu    sync.Mutex
	n     int
	head  []byte
	tail  []byte // ring buffer once full
	pos   int
	total int64
}

func newHeadTail(n int) *headTail { return &headTail{n: n} }

func (h *headTail) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.total += int64(len(p))
	q := p
	if room := h.n - len(h.head); room > 0 {
		k := min(room, len(q))
		h.head = append(h.head, q[:k]...)
		q = q[k:]
	}
	for len(q) > 0 {
		if len(h.tail) < h.n {
			k := min(h.n-len(h.tail), len(q))
			h.tail = append(h.tail, q[:k]...)
			q = q[k:]
			continue
		}
		k := copy(h.tail[h.pos:], q)
		h.pos = (h.pos + k) % h.n
		q = q[k:]
	}
	return len(p), nil
}

func (h *headTail) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	tail := append(append([]byte{}, h.tail[h.pos:]...), h.tail[:h.pos]...)
	kept := int64(len(h.head) + len(tail))
	if kept == h.total {
		return strings.ToValidUTF8(string(h.head)+string(tail), "\uFFFD")
	}
	return strings.ToValidUTF8(string(h.head), "\uFFFD") + truncationMarker(int(h.total-kept), int(h.total)) +
		strings.ToValidUTF8(string(tail), "\uFFFD")
}

func truncationMarker(omitted, total int) string {
	return fmt.Sprintf("\n\n... [OUTPUT TRUNCATED - %d characters omitted out of %d total] ...\n\n", omitted, total)
}

// capOutput bounds output to max characters: 40% from the head, 60% from the tail
// (errors and summaries tend to come last), with a marker saying what was cut.
func capOutput(s string, limit int) string {
	n := utf8.RuneCountInString(s)
	if n <= limit {
		return s
	}
	r := []rune(s)
	headN := limit * 2 / 5
	tailN := limit - headN
	return string(r[:headN]) + truncationMarker(n-headN-tailN, n) + string(r[n-tailN:])
}
