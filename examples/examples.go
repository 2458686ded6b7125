// Package examples ships the example plugins inside the binary, so `hermes demo`
// works on a fresh machine with no network.
package examples

import "embed"

// HelloWorld is the seed's hello-world plugin, verbatim: plugin.yaml and __init__.py.
//
//go:embed plugins/hello-world/plugin.yaml plugins/hello-world/__init__.py
var HelloWorld embed.FS

// HelloWorldDir is the directory of the hello-world plugin inside HelloWorld.
const HelloWorldDir = "plugins/hello-world"
