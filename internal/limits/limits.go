// Package limits refuses files and values too big or too deeply nested for
// hermes to parse, before any parser runs. The YAML and JSON parsers hermes
// uses build a tree (goccy/go-yaml also a path per level, quadratic in depth),
// so a few hundred KiB of "[" can take the machine's memory; a linear byte
// pass that allocates nothing bounds that work first. Each kind of input has
// its own caps (size, nesting depth, value count), chosen far above what a
// real file holds.
package limits

import (
	"bytes"
	"errors"
	"fmt"
)

// Kind is one kind of input and its caps.
type Kind struct {
	// Noun names the input in messages: "a manifest", "a config file".
	Noun string
	// Fix says what the user can do: "fix or remove the file".
	Fix string
	// MaxBytes, MaxDepth and MaxNodes are the caps. MaxDepth is at most
	// maxStack; MaxNodes counts values (a line of a line-based file).
	MaxBytes, MaxDepth, MaxNodes int
}

// The kinds hermes reads. Real files are far smaller (docs/DESIGN.md, "No
// file can exhaust memory"): a manifest is under 2 KiB and 5 levels deep, the
// community index 13 KiB.
var (
	Manifest = Kind{Noun: "a manifest", Fix: "fix or remove the file",
		MaxBytes: 256 << 10, MaxDepth: 64, MaxNodes: 20_000}
	Config = Kind{Noun: "a config file", Fix: "fix the file by hand, or move it aside to start from defaults",
		MaxBytes: 4 << 20, MaxDepth: 128, MaxNodes: 200_000}
	Dotenv = Kind{Noun: "a .env file", Fix: "fix or remove the file",
		MaxBytes: 1 << 20, MaxDepth: 1, MaxNodes: 50_000}
	InstallMetadata = Kind{Noun: "install metadata", Fix: "fix the JSON by hand, or run `hermes plugins repair-metadata` to rebuild it",
		MaxBytes: 1 << 20, MaxDepth: 32, MaxNodes: 100_000}
	Index = Kind{Noun: "a plugin index", Fix: "delete the cached file (hermes fetches it again) or fix the source",
		MaxBytes: 5 << 20, MaxDepth: 32, MaxNodes: 1_000_000}
	Catalog = Kind{Noun: "a plugin catalog", Fix: "delete the cached file (hermes fetches it again) or fix the source",
		MaxBytes: 2 << 20, MaxDepth: 32, MaxNodes: 500_000}
	// PluginValue is one value a plugin stores (ctx.set_config, state). Its
	// depth leaves room under plugins.entries.<id>.settings within Config.
	PluginValue = Kind{Noun: "a stored plugin value", Fix: "store large or deep data in a file under the plugin's data directory",
		MaxBytes: 1 << 20, MaxDepth: 64, MaxNodes: 100_000}
	// PluginState is a plugin's whole state.json (upstream's 10 MiB quota).
	PluginState = Kind{Noun: "plugin state", Fix: "fix or delete the file",
		MaxBytes: 10 << 20, MaxDepth: PluginValue.MaxDepth + 2, MaxNodes: 1_000_000}
)

// maxStack bounds the YAML block-indentation stack, kept in a fixed array so
// the pass allocates nothing.
const maxStack = 256

// The caps, for errors.Is.
var (
	ErrTooLarge     = errors.New("input too large")
	ErrTooDeep      = errors.New("input nests too deeply")
	ErrTooManyNodes = errors.New("input holds too many values")
)

// Error is input refused by a cap. Line is where the cap was crossed (1-based).
type Error struct {
	File  string
	Line  int
	Kind  Kind
	Cap   error // ErrTooLarge, ErrTooDeep or ErrTooManyNodes
	Limit int
}

// Detail is the message without the file and line: what is wrong and what a
// real input of the kind looks like.
func (e *Error) Detail() string {
	switch e.Cap {
	case ErrTooLarge:
		return fmt.Sprintf("is larger than %s; %s is a few KiB", size(e.Limit), e.Kind.Noun)
	case ErrTooDeep:
		return fmt.Sprintf("nests deeper than %d levels; %s needs a few", e.Limit, e.Kind.Noun)
	}
	return fmt.Sprintf("holds more than %d values; %s holds a few hundred", e.Limit, e.Kind.Noun)
}

func (e *Error) Error() string {
	file, fix := e.File, ""
	if file == "" {
		file = "the file"
	}
	if e.Kind.Fix != "" {
		fix = "; " + e.Kind.Fix
	}
	if e.Cap == ErrTooLarge {
		return fmt.Sprintf("%s %s (the cap falls at line %d)%s", file, e.Detail(), e.Line, fix)
	}
	return fmt.Sprintf("%s at line %d %s%s", file, e.Line, e.Detail(), fix)
}

// Bare is e without the file and the fix, for a caller whose own message
// names both.
func (e *Error) Bare() *Error {
	b := *e
	b.File, b.Kind.Fix = "", ""
	return &b
}

func (e *Error) Unwrap() error { return e.Cap }

func size(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

func refuse(file string, line int, k Kind, cap error, limit int) error {
	return &Error{File: file, Line: line, Kind: k, Cap: cap, Limit: limit}
}

// checkSize refuses data over k.MaxBytes, naming the line the cap falls in.
func checkSize(data []byte, file string, k Kind) error {
	if len(data) <= k.MaxBytes {
		return nil
	}
	return refuse(file, bytes.Count(data[:k.MaxBytes], nl)+1, k, ErrTooLarge, k.MaxBytes)
}

var nl = []byte{'\n'}

// CheckLines applies k's size cap and MaxNodes as a cap on lines: for
// line-based files such as .env.
func CheckLines(data []byte, file string, k Kind) error {
	if err := checkSize(data, file, k); err != nil {
		return err
	}
	if n := bytes.Count(data, nl) + 1; n > k.MaxNodes {
		return refuse(file, k.MaxNodes+1, k, ErrTooManyNodes, k.MaxNodes)
	}
	return nil
}

// CheckValue bounds a decoded value (maps, slices, scalars as encoding/json
// or a YAML decoder builds them): its nesting and its count of values. The
// walk stops at the caps, so its cost is bounded whatever v holds.
func CheckValue(v any, what string, k Kind) error {
	nodes := 0
	if cap := walk(v, 1, k, &nodes); cap != nil {
		limit := k.MaxDepth
		if cap == ErrTooManyNodes {
			limit = k.MaxNodes
		}
		return &ValueError{What: what, Kind: k, Cap: cap, Limit: limit}
	}
	return nil
}

func walk(v any, depth int, k Kind, nodes *int) error {
	if *nodes++; *nodes > k.MaxNodes {
		return ErrTooManyNodes
	}
	if depth > k.MaxDepth {
		return ErrTooDeep
	}
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			if err := walk(e, depth+1, k, nodes); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range x {
			if err := walk(e, depth+1, k, nodes); err != nil {
				return err
			}
		}
	}
	return nil
}

// ValueError is a value refused by a cap (it has no file or line).
type ValueError struct {
	What  string // "the value of ctx.set_config(\"k\")"
	Kind  Kind
	Cap   error
	Limit int
}

func (e *ValueError) Error() string {
	d := (&Error{Kind: e.Kind, Cap: e.Cap, Limit: e.Limit}).Detail()
	return fmt.Sprintf("%s %s; %s", e.What, d, e.Kind.Fix)
}

func (e *ValueError) Unwrap() error { return e.Cap }
