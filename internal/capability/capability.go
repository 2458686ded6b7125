// Package capability holds the capability ids a plugin can declare, their legacy
// per-plugin config gates, and the check of whether a plugin holds one. Capabilities
// are consent and audit, not a sandbox.
package capability

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strings"
	"time"

	"github.com/hermes-go/hermes/internal/config"
)

// Capability is one privileged host surface a plugin may ask for.
type Capability struct {
	ID        string
	LegacyKey []string // path under plugins.entries.<id>
	Risk      string   // shown on the consent screen
}

// All lists every known capability id, in upstream's order.
var All = []Capability{
	{"tools.override", []string{"allow_tool_override"}, "Replace built-in tools (e.g. shell_exec, write_file) — an override can intercept everything routed through that tool"},
	{"llm.provider_override", []string{"llm", "allow_provider_override"}, "Run host-owned LLM calls against a provider other than your active one (uses your credentials)"},
	{"llm.model_override", []string{"llm", "allow_model_override"}, "Choose which model host-owned LLM calls use (spend follows the chosen model)"},
	{"llm.agent_id_override", []string{"llm", "allow_agent_id_override"}, "Attribute its LLM calls to a different agent id"},
	{"llm.profile_override", []string{"llm", "allow_profile_override"}, "Run LLM calls under a different auth profile"},
	{"llm.task_override", []string{"llm", "allow_task_override"}, "Route its LLM calls through the host's built-in auxiliary task lanes"},
	{"gateway.platform_actions", []string{"allow_platform_actions"}, "Act on connected chat platforms as the gateway bot (add reactions, rename threads) via ctx.platform_actions"},
	{"gateway.plugin_status", []string{"allow_plugin_status"}, "Post transient status lines to the current conversation as the gateway bot (ctx.emit_status / ctx.platform_actions.send_status) — consent + audit visibility, not a security boundary"},
}

// Lookup finds a capability by id.
func Lookup(id string) (Capability, bool) {
	for _, c := range All {
		if c.ID == id {
			return c, true
		}
	}
	return Capability{}, false
}

// Known reports whether id is a capability this host knows.
func Known(id string) bool {
	_, ok := Lookup(id)
	return ok
}

// Granted reports whether plugin holds capability id according to the decoded config
// (the whole config.yaml as a map), and the evidence for the audit log. Unknown ids,
// missing or malformed config mean "not granted".
func Granted(cfg map[string]any, pluginID, id string) (bool, string) {
	c, ok := Lookup(id)
	if !ok || cfg == nil {
		return false, "not granted"
	}
	entry := entryOf(cfg, pluginID)
	if entry == nil {
		return false, "not granted"
	}
	if list, ok := entry["granted_capabilities"].([]any); ok {
		for _, v := range list {
			if s, ok := v.(string); ok && s == id {
				return true, "granted_capabilities"
			}
		}
	}
	var cur any = entry
	for _, k := range c.LegacyKey {
		m, ok := cur.(map[string]any)
		if !ok {
			return false, "not granted"
		}
		cur = m[k]
	}
	// PyYAML reads yes/on as true: a legacy gate written that way grants, as upstream.
	if b, ok := config.Bool(cur); ok && b {
		return true, "legacy key plugins.entries." + pluginID + "." + joinDots(c.LegacyKey) + " (deprecated)"
	}
	return false, "not granted"
}

// GrantedList returns the known capabilities plugin holds, sorted.
func GrantedList(cfg map[string]any, pluginID string) []string {
	var out []string
	for _, c := range All {
		if ok, _ := Granted(cfg, pluginID, c.ID); ok {
			out = append(out, c.ID)
		}
	}
	sort.Strings(out)
	return out
}

func entryOf(cfg map[string]any, pluginID string) map[string]any {
	plugins, _ := cfg["plugins"].(map[string]any)
	entries, _ := plugins["entries"].(map[string]any)
	entry, _ := entries[pluginID].(map[string]any)
	return entry
}

func joinDots(parts []string) string {
	s := ""
	for i, p := range parts {
		if i > 0 {
			s += "."
		}
		s += p
	}
	return s
}

// KnownOnly filters ids to the known ones, deduplicated, in their first order.
func KnownOnly(ids []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, id := range ids {
		if Known(id) && !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// SetHash is upstream's consent hash: sha256 of the sorted, deduplicated known ids
// joined by newlines, so it does not depend on declaration order.
func SetHash(ids []string) string {
	known := KnownOnly(ids)
	sort.Strings(known)
	sum := sha256.Sum256([]byte(strings.Join(known, "\n")))
	return hex.EncodeToString(sum[:])
}

// Pending returns the declared known capabilities the plugin does not hold yet.
func Pending(cfg map[string]any, pluginID string, declared []string) []string {
	var out []string
	for _, id := range KnownOnly(declared) {
		if !grantedExplicitly(cfg, pluginID, id) {
			out = append(out, id)
		}
	}
	return out
}

func grantedExplicitly(cfg map[string]any, pluginID, id string) bool {
	ok, _ := Granted(cfg, pluginID, id)
	return ok
}

// DeclaredSetChanged reports whether the stored consent hash is missing, corrupt or
// different from the hash of what the plugin declares now.
func DeclaredSetChanged(cfg map[string]any, pluginID string, declared []string) bool {
	entry := entryOf(cfg, pluginID)
	consent, _ := entry["capabilities_consent"].(map[string]any)
	h, _ := consent["hash"].(string)
	return len(h) != 64 || h != SetHash(declared)
}

// Editor is the part of a config document RecordConsent needs.
type Editor interface {
	GetPath(path []string) (any, bool)
	SetPath(path []string, value any) error
}

// RecordConsent stores a grant: granted_capabilities becomes the sorted union of what
// was held and what is granted now (never shrinks), capabilities_consent records the
// declared-set hash and time, and every grant is mirrored into its legacy allow_* key
// so older enforcement sites agree.
func RecordConsent(d Editor, pluginID string, granted, declared []string, now time.Time) error {
	base := []string{"plugins", "entries", pluginID}
	set := map[string]bool{}
	if prev, ok := d.GetPath(append(base, "granted_capabilities")); ok {
		if list, ok := prev.([]any); ok {
			for _, v := range list {
				if s, ok := v.(string); ok && Known(s) {
					set[s] = true
				}
			}
		}
	}
	for _, g := range KnownOnly(granted) {
		set[g] = true
	}
	union := make([]string, 0, len(set))
	for s := range set {
		union = append(union, s)
	}
	sort.Strings(union)
	if err := d.SetPath(append(base, "granted_capabilities"), union); err != nil {
		return err
	}
	consent := map[string]any{"hash": SetHash(declared), "granted_at": now.UTC().Format("2006-01-02T15:04:05+00:00")}
	if err := d.SetPath(append(base, "capabilities_consent"), consent); err != nil {
		return err
	}
	for _, g := range KnownOnly(granted) {
		c, _ := Lookup(g)
		if err := d.SetPath(append(append([]string{}, base...), c.LegacyKey...), true); err != nil {
			return err
		}
	}
	return nil
}
