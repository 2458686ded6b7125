//go:build tools

// Package hermes pins module dependencies that are only used by packages still
// being written, so `go mod tidy` keeps them. Remove an import once real code uses it.
package hermes

import (
	_ "github.com/goccy/go-yaml"
	_ "github.com/gofrs/flock"
	_ "github.com/google/renameio/v2"
	_ "github.com/mattn/go-isatty"
	_ "github.com/rogpeppe/go-internal/testscript"
	_ "github.com/santhosh-tekuri/jsonschema/v6"
	_ "github.com/spf13/cobra"
	_ "go.uber.org/goleak"
	_ "golang.org/x/sys/unix"
)
