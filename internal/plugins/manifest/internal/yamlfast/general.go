//go:build hermes_yamlgeneral

package yamlfast

// Enabled: see enabled.go.
const Enabled = false
