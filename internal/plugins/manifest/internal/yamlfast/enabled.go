//go:build !hermes_yamlgeneral

package yamlfast

// Enabled is false in a build with the hermes_yamlgeneral tag, where Decode
// declines everything and every document takes the general parser. The tag
// exists to measure what the fast decoder saves (docs/DESIGN.md); tests that
// pin the fast path skip in such a build.
const Enabled = true
