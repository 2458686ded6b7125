package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// argValidator checks a call's arguments against the tool's parameters schema before
// the call, so a malformed call gets a precise error instead of a plugin traceback.
type argValidator struct {
	schema *jsonschema.Schema
}

func newArgValidator(params map[string]any) (*argValidator, error) {
	if len(params) == 0 {
		return nil, nil
	}
	// Round-trip through JSON so the compiler sees plain JSON types (json.Number).
	b, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(b)))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("tool-parameters.json", doc); err != nil {
		return nil, err
	}
	s, err := c.Compile("tool-parameters.json")
	if err != nil {
		return nil, err
	}
	return &argValidator{schema: s}, nil
}

// ValidateArgs reports the first problems with args for tool t (nil when they fit).
func (t *Tool) ValidateArgs(args map[string]any) error {
	if t.validator == nil {
		return nil
	}
	b, err := json.Marshal(args)
	if err != nil {
		return fmt.Errorf("arguments are not JSON: %w", err)
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(string(b)))
	if err != nil {
		return err
	}
	err = t.validator.schema.Validate(inst)
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		return fmt.Errorf("%s", describe(ve))
	}
	return err
}

// describe flattens a validation error into "at /path: message" lines.
func describe(ve *jsonschema.ValidationError) string {
	var lines []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			loc := "/" + strings.Join(e.InstanceLocation, "/")
			if loc == "/" {
				loc = "the arguments"
			}
			lines = append(lines, fmt.Sprintf("%s: %s", loc, e.ErrorKind.LocalizedString(printer)))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	if len(lines) > 5 {
		lines = append(lines[:5], fmt.Sprintf("(%d more)", len(lines)-5))
	}
	return strings.Join(lines, "; ")
}

var printer = message.NewPrinter(language.English)
