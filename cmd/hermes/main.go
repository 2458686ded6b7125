// Command hermes is the Hermes agent host and plugin manager.
package main

import (
	"os"

	"github.com/hermes-go/hermes/internal/cli"
	// First among hermes' own packages to initialise: start-up memory policy.
	_ "github.com/hermes-go/hermes/internal/startmem"
)

func main() { os.Exit(cli.Main()) }
