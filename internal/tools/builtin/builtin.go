// Package builtin holds the tools compiled into hermes: read_file, write_file,
// patch, search_files (toolset "file") and terminal (toolset "terminal"). Names,
// parameter names and result shapes follow upstream Hermes so models trained on it
// call them correctly.
//
// Paths: relative paths resolve against Options.WorkDir; absolute paths and ~ are
// allowed (upstream does not confine the file tools either: the terminal could reach
// the same files anyway). Writes to system and credential paths (/etc, /usr, ~/.ssh,
// Hermes' own config.yaml and .env, ...) are refused; the terminal, which asks for
// approval, is the way to change those.
package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hermes-go/hermes/internal/approval"
	"github.com/hermes-go/hermes/internal/reaper"
	"github.com/hermes-go/hermes/internal/tools"
)

// Tool and toolset names (upstream's).
const (
	ReadFile    = "read_file"
	WriteFile   = "write_file"
	Patch       = "patch"
	SearchFiles = "search_files"
	Terminal    = "terminal"

	ToolsetFile     = "file"
	ToolsetTerminal = "terminal"
)

// Defaults.
const (
	DefaultTerminalTimeout = 180 * time.Second // upstream's default
	MaxTerminalTimeout     = 600 * time.Second // upstream's foreground ceiling
	DefaultOutputCap       = 50_000            // characters of terminal output the model sees
	MaxReadChars           = 100_000           // characters one read_file returns
)

// Options configure the built-in tools.
type Options struct {
	// WorkDir anchors relative paths and is the terminal's default directory
	// ("" = the process's working directory).
	WorkDir string
	// TerminalTimeout is the default command timeout (0 = DefaultTerminalTimeout);
	// the model may pass its own "timeout", up to MaxTerminalTimeout.
	TerminalTimeout time.Duration
	// OutputCap bounds the terminal output handed to the model, in characters
	// (0 = DefaultOutputCap). Longer output keeps its head and tail around a marker.
	OutputCap int
	// Guard decides which commands run; nil = the built-in rules with no user rules
	// (the terminal never runs unguarded).
	Guard *approval.Guard
	// Approver answers dangerous commands. nil = nobody can be asked: they are refused
	// with a message saying how to allow them. An approver that also implements
	// approval.CommandApprover gets every pattern key of the command.
	Approver tools.Approver
	// TransformOutput is the transform_terminal_output hook point: it gets the
	// command, its captured output (already bounded, before the final cap) and exit
	// code, and returns the output to use. The agent wires it to the hook dispatcher
	// (payload: command, output, returncode, task_id, env_type="local"; the first
	// string a plugin returns replaces the output). nil = unchanged.
	TransformOutput func(ctx context.Context, command, output string, exitCode int) string
	// ProtectedPaths are extra files or directories write_file and patch refuse
	// (the CLI adds $HERMES_HOME/config.yaml and .env).
	ProtectedPaths []string
	// SecretPaths are files read_file and search_files will not read (the CLI adds
	// $HERMES_HOME/.env, which holds API keys); the model gets a refusal instead.
	SecretPaths []string
	// Environ is the environment terminal commands inherit (hermes' own; nil:
	// none besides PAGER settings and Env).
	Environ []string
	// Env is added to the environment of terminal commands (tests put a marker here).
	Env []string
	// Reaper contains each terminal command and whatever it starts (nil: its
	// process group only).
	Reaper *reaper.Reaper
}

// Register adds the built-in tools to reg with Source tools.SourceBuiltin.
func Register(reg *tools.Registry, opts Options) error {
	t := newToolbox(opts)
	for _, tool := range []*tools.Tool{
		{Name: ReadFile, Toolset: ToolsetFile, Emoji: "📖", Schema: readFileSchema, Handler: t.readFile},
		{Name: WriteFile, Toolset: ToolsetFile, Emoji: "✍️", Schema: writeFileSchema, Handler: t.writeFile},
		{Name: Patch, Toolset: ToolsetFile, Emoji: "🔧", Schema: patchSchema, Handler: t.patch},
		{Name: SearchFiles, Toolset: ToolsetFile, Emoji: "🔎", Schema: searchFilesSchema, Handler: t.searchFiles},
		{Name: Terminal, Toolset: ToolsetTerminal, Emoji: "💻", Schema: terminalSchema, Handler: t.terminal},
	} {
		tool.Source = tools.SourceBuiltin
		if err := reg.Register(tool, false); err != nil {
			return fmt.Errorf("register built-in tool %s: %w", tool.Name, err)
		}
	}
	return nil
}

type toolbox struct {
	opts Options
	home string
}

func newToolbox(opts Options) *toolbox {
	if opts.WorkDir == "" {
		opts.WorkDir, _ = os.Getwd()
	}
	if opts.TerminalTimeout <= 0 {
		opts.TerminalTimeout = DefaultTerminalTimeout
	}
	if opts.OutputCap <= 0 {
		opts.OutputCap = DefaultOutputCap
	}
	if opts.Guard == nil {
		opts.Guard = &approval.Guard{}
	}
	home, _ := os.UserHomeDir()
	return &toolbox{opts: opts, home: home}
}

// resolve turns a model-given path into an absolute one: ~ is the home directory,
// relative paths are under WorkDir.
func (t *toolbox) resolve(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		p = filepath.Join(t.home, strings.TrimPrefix(p[1:], "/"))
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(t.opts.WorkDir, p)
	}
	return filepath.Clean(p)
}

// writeDenied says why a write to abs is refused, or "".
func (t *toolbox) writeDenied(abs string) string {
	under := func(dir string) bool {
		dir = filepath.Clean(dir)
		return abs == dir || strings.HasPrefix(abs, dir+string(filepath.Separator))
	}
	for _, d := range []string{"/etc", "/usr", "/bin", "/sbin", "/boot", "/lib", "/lib64", "/proc", "/sys", "/dev", "/private/etc"} {
		if under(d) {
			return "it is a system path"
		}
	}
	if t.home != "" && t.home != "/" {
		for _, d := range []string{".ssh", ".gnupg", ".aws", ".netrc", ".pgpass", ".npmrc", ".pypirc", ".bashrc", ".zshrc", ".profile", ".bash_profile", ".zprofile"} {
			if under(filepath.Join(t.home, d)) {
				return "it holds credentials or shell start-up code"
			}
		}
	}
	for _, p := range t.opts.ProtectedPaths {
		if p != "" && under(p) {
			return "it is protected (Hermes' own configuration and secrets)"
		}
	}
	return ""
}

// secret reports whether abs is one of the SecretPaths (symlinks followed).
func (t *toolbox) secret(abs string) bool {
	real := realPath(abs)
	for _, p := range t.opts.SecretPaths {
		if p == "" {
			continue
		}
		if c := filepath.Clean(p); c == abs || c == real || realPath(c) == real {
			return true
		}
	}
	return false
}

// --- arguments ---------------------------------------------------------------

type argError string

func (e argError) Error() string { return string(e) }

func strArg(args map[string]any, name string, required bool) (string, error) {
	v, ok := args[name]
	if !ok || v == nil {
		if required {
			return "", argError(fmt.Sprintf("missing required argument %q", name))
		}
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", argError(fmt.Sprintf("argument %q must be a string, got %s", name, jsonType(v)))
	}
	return s, nil
}

func intArg(args map[string]any, name string, def int) (int, error) {
	v, ok := args[name]
	if !ok || v == nil {
		return def, nil
	}
	switch n := v.(type) {
	case int:
		return n, nil
	case int64:
		return int(n), nil
	case float64:
		if n != math.Trunc(n) || math.IsInf(n, 0) {
			return 0, argError(fmt.Sprintf("argument %q must be a whole number, got %v", name, n))
		}
		return int(n), nil
	case json.Number:
		i, err := strconv.Atoi(n.String())
		if err != nil {
			return 0, argError(fmt.Sprintf("argument %q must be a whole number, got %s", name, n))
		}
		return i, nil
	case string:
		// Models sometimes quote numbers; upstream coerces them.
		i, err := strconv.Atoi(strings.TrimSpace(n))
		if err != nil {
			return 0, argError(fmt.Sprintf("argument %q must be a whole number, got %q", name, n))
		}
		return i, nil
	}
	return 0, argError(fmt.Sprintf("argument %q must be a whole number, got %s", name, jsonType(v)))
}

func boolArg(args map[string]any, name string) (bool, error) {
	v, ok := args[name]
	if !ok || v == nil {
		return false, nil
	}
	switch b := v.(type) {
	case bool:
		return b, nil
	case string:
		switch strings.ToLower(b) {
		case "true":
			return true, nil
		case "false", "":
			return false, nil
		}
	}
	return false, argError(fmt.Sprintf("argument %q must be true or false, got %v", name, v))
}

func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64, int, int64, json.Number:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// --- results -----------------------------------------------------------------

// kv is one member of an ordered JSON object: results keep upstream's key order.
type kv struct {
	k string
	v any
}

type obj []kv

// encode writes JSON the way upstream's json.dumps(ensure_ascii=False) does:
// ", " and ": " separators, no HTML escaping, keys in the given order.
func encode(v any) string {
	var sb strings.Builder
	encodeTo(&sb, v)
	return sb.String()
}

func encodeList[T any](sb *strings.Builder, v []T) {
	sb.WriteByte('[')
	for i, e := range v {
		if i > 0 {
			sb.WriteString(", ")
		}
		encodeTo(sb, e)
	}
	sb.WriteByte(']')
}

func encodeTo(sb *strings.Builder, v any) {
	switch v := v.(type) {
	case obj:
		sb.WriteByte('{')
		for i, m := range v {
			if i > 0 {
				sb.WriteString(", ")
			}
			encodeTo(sb, m.k)
			sb.WriteString(": ")
			encodeTo(sb, m.v)
		}
		sb.WriteByte('}')
	case map[string]int:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		o := make(obj, 0, len(keys))
		for _, k := range keys {
			o = append(o, kv{k, v[k]})
		}
		encodeTo(sb, o)
	case []obj:
		encodeList(sb, v)
	case []string:
		encodeList(sb, v)
	default:
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			sb.WriteString("null")
			return
		}
		sb.WriteString(strings.TrimSuffix(b.String(), "\n"))
	}
}

// fail ends a call with a tool error: the model sees upstream's tool_error shape,
// {"error": message}, and hooks see status "error" with errType.
func fail(errType, format string, a ...any) (string, error) {
	return "", &tools.ToolError{Type: errType, Message: fmt.Sprintf(format, a...)}
}

// badArgs reports an argument problem.
func badArgs(tool string, err error) (string, error) {
	return fail("invalid_arguments", "%s: %v", tool, err)
}
