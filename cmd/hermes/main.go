// Command hermes is the Hermes agent host and plugin manager.
package main

import (
	"os"

	"github.com/hermes-go/hermes/internal/cli"
)

func main() { os.Exit(cli.Main()) }
