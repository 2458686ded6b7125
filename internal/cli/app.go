// Package cli is the hermes command line: the verbs, one file per group, each
// built from an app.Factory (terminal, environment, HERMES_HOME and the plugin
// host) so commands are testable end to end in-process.
package cli

// Version is the hermes version (set at build time with -ldflags).
var Version = "0.1.0"
