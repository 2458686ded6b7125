package manifest

import "sort"

// capabilityIDs are the capability ids a manifest may declare, in upstream's
// registry order. Each maps to a trust gate that exists on the enforcing
// surface; ids without one are never minted.
var capabilityIDs = []string{
	"tools.override",
	"llm.provider_override",
	"llm.model_override",
	"llm.agent_id_override",
	"llm.profile_override",
	"llm.task_override",
	"gateway.platform_actions",
	"gateway.plugin_status",
}

// KnownCapability reports whether id is a capability this host can grant.
func KnownCapability(id string) bool {
	for _, c := range capabilityIDs {
		if c == id {
			return true
		}
	}
	return false
}

// KnownCapabilities returns the capability ids in registry order.
func KnownCapabilities() []string {
	return append([]string(nil), capabilityIDs...)
}

func sortedCapabilities() []string {
	s := KnownCapabilities()
	sort.Strings(s)
	return s
}
