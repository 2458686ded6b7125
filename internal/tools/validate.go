package tools

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// argValidator checks a call's arguments against the tool's parameters schema before
// the call, so a malformed call gets a precise error instead of a plugin traceback.
type argValidator struct {
	schema *jsonschema.Resolved
}

func newArgValidator(params map[string]any) (*argValidator, error) {
	if len(params) == 0 {
		return nil, nil
	}
	// Round-trip through JSON: plugin schemas arrive as generic maps.
	b, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	r, err := s.Resolve(nil)
	if err != nil {
		return nil, err
	}
	return &argValidator{schema: r}, nil
}

// ValidateArgs reports what is wrong with args for tool t (nil when they fit).
func (t *Tool) ValidateArgs(args map[string]any) error {
	t.compile()
	if t.validator == nil {
		return nil
	}
	// Validate the JSON form of the arguments, as the model would have sent them.
	b, err := json.Marshal(args)
	if err != nil {
		return fmt.Errorf("arguments are not JSON: %w", err)
	}
	var inst any
	if err := json.Unmarshal(b, &inst); err != nil {
		return err
	}
	if err := t.validator.schema.Validate(inst); err != nil {
		return fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "validating root: "))
	}
	return nil
}
