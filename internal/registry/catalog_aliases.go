package registry

import (
	"encoding/json"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/registry/internal/catalog"
)

// The names of the catalogue's data as the rest of the module used them before the data
// moved to internal/registry/internal/catalog. They stay until their users name the
// catalogue's own (the aliases are the whole list; docs/architecture.md).

// Tool is catalog.Tool.
type Tool = catalog.Tool

// Prompt is catalog.Prompt.
type Prompt = catalog.Prompt

// Resource is catalog.Resource.
type Resource = catalog.Resource

// Skill is catalog.Skill.
type Skill = catalog.Skill

// SkillURI is catalog.SkillURI.
func SkillURI(server, uri string) string { return catalog.SkillURI(server, uri) }

// SplitSkillURI is catalog.SplitSkillURI.
func SplitSkillURI(uri string) (server, upstream string, ok bool) { return catalog.SplitSkillURI(uri) }

// SkillsSettings is catalog.SkillsSettings.
func SkillsSettings(settings []json.RawMessage) json.RawMessage {
	return catalog.SkillsSettings(settings)
}

// SkillsExtension is catalog.SkillsExtension.
const SkillsExtension = catalog.SkillsExtension

// SearchUsual is how many of an agent's most-used tools a search whose words match nothing
// returns (View.SearchRanked).
const SearchUsual = catalog.SearchUsual

// Catalog is catalog.Catalog.
type Catalog = catalog.Catalog

// View is catalog.View.
type View = catalog.View

// ViewFilter is catalog.ViewFilter.
type ViewFilter = catalog.ViewFilter

// Page is catalog.Page.
type Page = catalog.Page

// NameRule is catalog.NameRule.
type NameRule = catalog.NameRule

// PluginRef is catalog.PluginRef.
type PluginRef = catalog.PluginRef

// TokenizerName is catalog.TokenizerName.
const TokenizerName = catalog.TokenizerName

// PluginURIScheme is catalog.PluginURIScheme.
const PluginURIScheme = catalog.PluginURIScheme

// CountTokens is catalog.CountTokens.
func CountTokens(b []byte) int { return catalog.CountTokens(b) }

// ExposedName is catalog.ExposedName.
func ExposedName(server, name string, n config.Naming) string {
	return catalog.ExposedName(server, name, n)
}

// PluginToolName is catalog.PluginToolName.
func PluginToolName(plugin, full, op string, n config.Naming) string {
	return catalog.PluginToolName(plugin, full, op, n)
}

// IsPluginURI is catalog.IsPluginURI.
func IsPluginURI(uri string) bool { return catalog.IsPluginURI(uri) }

// ParsePluginURI is catalog.ParsePluginURI.
func ParsePluginURI(uri string) (PluginRef, error) { return catalog.ParsePluginURI(uri) }
