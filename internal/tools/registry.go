// Package tools holds the one registry of tools the model can call, built-in and
// plugin-provided alike, and the pipeline every call goes through (argument
// validation, pre/post hooks, approval, result transforms).
package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
)

// SourceBuiltin marks tools compiled into hermes.
const SourceBuiltin = "builtin"

// Handler runs a tool. args are the model's arguments; kwargs carry call context
// (task_id, session_id, tool_call_id, ...). The result is the tool's JSON string.
type Handler func(ctx context.Context, args map[string]any, kwargs map[string]any) (string, error)

// Tool is one registered tool.
type Tool struct {
	Name        string
	Toolset     string
	Description string // registry metadata; the model sees Schema["description"]
	Emoji       string
	Schema      map[string]any // {"name", "description", "parameters"}
	Source      string         // SourceBuiltin or the owning plugin's key
	RequiresEnv []string
	IsAsync     bool
	// Check hides the tool when it reports false (upstream check_fn); nil = available.
	Check   func(ctx context.Context) bool
	Handler Handler

	// The validator is compiled on first use: a command that never calls a tool
	// (plugins list) should not pay for compiling every schema.
	compileOnce   sync.Once
	validator     *argValidator
	schemaProblem string
}

func (t *Tool) compile() {
	t.compileOnce.Do(func() {
		// A schema hermes cannot compile does not stop the tool: upstream never checks
		// schemas, so real plugins with sloppy ones must keep working. The caller warns.
		if v, err := newArgValidator(t.Parameters()); err != nil {
			t.schemaProblem = err.Error()
		} else {
			t.validator = v
		}
	})
}

// SchemaProblem says why the parameters schema cannot be used to check arguments
// ("" when it can); such a tool takes its arguments unchecked.
func (t *Tool) SchemaProblem() string {
	t.compile()
	return t.schemaProblem
}

// Parameters returns the JSON schema of the tool's arguments (may be nil).
func (t *Tool) Parameters() map[string]any {
	if t.Schema == nil {
		return nil
	}
	p, _ := t.Schema["parameters"].(map[string]any)
	return p
}

// ModelDescription is what the model is told about the tool.
func (t *Tool) ModelDescription() string {
	if d, ok := t.Schema["description"].(string); ok && d != "" {
		return d
	}
	return t.Description
}

type checkReasonKey struct{}

// CheckFailed lets a Check function say why it could not answer (the plugin's
// check_fn raised): Available reports it. Check keeps its plain bool signature,
// which the agent and the built-in plugins use as it is.
func CheckFailed(ctx context.Context, err error) {
	if p, ok := ctx.Value(checkReasonKey{}).(*error); ok && err != nil {
		*p = err
	}
}

// Available runs the tool's check (upstream check_fn). err is set when the check
// failed instead of answering; ok is then false.
func (t *Tool) Available(ctx context.Context) (ok bool, err error) {
	if t.Check == nil {
		return true, nil
	}
	var reason error
	ok = t.Check(context.WithValue(ctx, checkReasonKey{}, &reason))
	if reason != nil {
		return false, reason
	}
	return ok, nil
}

// ShadowError reports a registration refused because the name is taken.
type ShadowError struct {
	Name, Existing, ExistingToolset string
}

func (e *ShadowError) Error() string {
	return fmt.Sprintf("tool %q is already registered by %s (toolset %q); pass override=True to replace it",
		e.Name, e.Existing, e.ExistingToolset)
}

// Registry is safe for concurrent use.
type Registry struct {
	mu        sync.RWMutex
	tools     map[string]*Tool
	displaced map[string]*Tool // name → the entry an override replaced, restored on removal
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{tools: map[string]*Tool{}, displaced: map[string]*Tool{}}
}

// Register adds t. A name already held by another source is refused with a
// *ShadowError unless override is true (the caller has already checked that the
// plugin may override), whatever toolset t claims: naming the holder's toolset must
// not be a way round the grant. The same source re-registering replaces its entry.
func (r *Registry) Register(t *Tool, override bool) error {
	if t.Name == "" {
		return fmt.Errorf("tool registration without a name")
	}
	if t.Handler == nil {
		return fmt.Errorf("tool %q has no handler", t.Name)
	}
	if t.Description == "" {
		t.Description, _ = t.Schema["description"].(string)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.tools[t.Name]; ok && old.Source != t.Source {
		if !override {
			return &ShadowError{Name: t.Name, Existing: old.Source, ExistingToolset: old.Toolset}
		}
		if _, seen := r.displaced[t.Name]; !seen {
			r.displaced[t.Name] = old
		}
	}
	r.tools[t.Name] = t
	return nil
}

// Get returns the tool called name.
func (r *Registry) Get(name string) (*Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.tools[name]
	return t, ok
}

// List returns every tool, sorted by name.
func (r *Registry) List() []*Tool {
	r.mu.RLock()
	out := make([]*Tool, 0, len(r.tools))
	for _, t := range r.tools {
		out = append(out, t)
	}
	r.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Remove withdraws one tool registered by source, restoring what it displaced.
func (r *Registry) Remove(name, source string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.tools[name]
	if !ok || t.Source != source {
		return false
	}
	if prev, ok := r.displaced[name]; ok {
		r.tools[name] = prev
		delete(r.displaced, name)
	} else {
		delete(r.tools, name)
	}
	return true
}

// RemoveSource withdraws every tool registered by source.
func (r *Registry) RemoveSource(source string) {
	for _, t := range r.List() {
		if t.Source == source {
			r.Remove(t.Name, source)
		}
	}
}

// ErrorResult is the JSON a failed tool call returns to the model, upstream's
// tool_error shape: {"error": message, ...extra}, the message bounded to 2048 chars.
func ErrorResult(message string, extra map[string]any) string {
	const max = 2048
	if len([]rune(message)) > max {
		message = string([]rune(message)[:max]) + "… [truncated]"
	}
	obj := map[string]any{}
	for k, v := range extra {
		obj[k] = v
	}
	obj["error"] = message
	b, err := marshalNoEscape(obj)
	if err != nil {
		return `{"error": "tool error could not be encoded"}`
	}
	return b
}

// marshalNoEscape encodes like Python's json.dumps(ensure_ascii=False): ", " and ": "
// separators, no HTML escaping, error first.
func marshalNoEscape(obj map[string]any) (string, error) {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		if k != "error" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if _, ok := obj["error"]; ok {
		keys = append([]string{"error"}, keys...)
	}
	buf := []byte{'{'}
	for i, k := range keys {
		if i > 0 {
			buf = append(buf, ", "...)
		}
		kb, err := encodeValue(k)
		if err != nil {
			return "", err
		}
		vb, err := encodeValue(obj[k])
		if err != nil {
			return "", err
		}
		buf = append(buf, kb...)
		buf = append(buf, ": "...)
		buf = append(buf, vb...)
	}
	buf = append(buf, '}')
	return string(buf), nil
}

func encodeValue(v any) ([]byte, error) {
	var sb jsonBuffer
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return sb.bytes(), nil
}

type jsonBuffer struct{ b []byte }

func (j *jsonBuffer) Write(p []byte) (int, error) { j.b = append(j.b, p...); return len(p), nil }
func (j *jsonBuffer) bytes() []byte {
	if n := len(j.b); n > 0 && j.b[n-1] == '\n' {
		return j.b[:n-1]
	}
	return j.b
}
