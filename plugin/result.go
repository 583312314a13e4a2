package plugin

import (
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"
)

// The contract's own MCP shapes. A generated tool's definition and a call's result are
// mcpgw's types, not an MCP SDK's, so the contract's API does not change when the SDK
// does. Their JSON is the MCP wire form (field names and order as MCP's Tool and
// CallToolResult are written), which is what the gateway sends.

// ToolDef is a generated tool's MCP definition: the tools/list entry. Its fields are
// MCP's Tool fields of the same names.
type ToolDef struct {
	Annotations  *Annotations       `json:"annotations,omitempty"`
	Description  string             `json:"description,omitempty"`
	InputSchema  *jsonschema.Schema `json:"inputSchema"`
	Name         string             `json:"name"`
	OutputSchema *jsonschema.Schema `json:"outputSchema,omitempty"`
	Title        string             `json:"title,omitempty"`
}

// Annotations are a tool's behaviour hints (MCP's ToolAnnotations fields of the same
// names). readOnlyHint and idempotentHint are always
// written; destructiveHint only when set (MCP's default for it is true).
type Annotations struct {
	DestructiveHint *bool `json:"destructiveHint,omitempty"`
	IdempotentHint  bool  `json:"idempotentHint"`
	ReadOnlyHint    bool  `json:"readOnlyHint"`
}

// Destructive reports the destructive hint as MCP defines it: true unless said otherwise,
// and for a tool without annotations.
func (a *Annotations) Destructive() bool {
	return a == nil || a.DestructiveHint == nil || *a.DestructiveHint
}

// ReadOnly reports the read-only hint (false for a tool without annotations).
func (a *Annotations) ReadOnly() bool { return a != nil && a.ReadOnlyHint }

// Result is a tool call's result (MCP's CallToolResult).
type Result struct {
	// Content is the result's content items (text items, from the dispatcher).
	Content []Content `json:"content"`
	// StructuredContent is the result as one JSON object (list, get, actions), or nil.
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	// IsError marks a result that reports a failure to the model rather than an answer.
	IsError bool `json:"isError,omitempty"`
}

// Content is one content item of a result. The dispatcher makes text items only.
type Content struct {
	Type string `json:"type"` // "text"
	Text string `json:"text"` // the item's text
}

// TextResult is a result of one text item.
func TextResult(text string) *Result {
	return &Result{Content: []Content{{Type: "text", Text: text}}}
}

// Text is the text of the result's text items, joined (for logs and tests).
func (r *Result) Text() string {
	if r == nil {
		return ""
	}
	var s string
	for _, c := range r.Content {
		if c.Type == "text" {
			s += c.Text
		}
	}
	return s
}
