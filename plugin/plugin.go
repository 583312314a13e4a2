// Package plugin is the contract between mcpgw and a resource provider, and the rules that
// turn a provider's resource types into MCP tools.
//
// A provider knows nothing about MCP. It describes resource types (keys of the form
// group::version::kind), what each can do (Capabilities), their filter fields and JSON
// Schemas, and answers Get/List/Find/Create/Update/Delete and actions against a named
// connection. Load reads a provider into a Catalog; Catalog.Tools generates the tools one
// session may see (its connections, read-only or not, whether its client can be asked to
// confirm) as ToolDef values (mcpgw's own MCP shapes, result.go); ToolSet.Call validates a call's arguments against the
// tool's input schema and dispatches it to the provider.
//
// The contract mirrors the Omniview plugin SDK: TypeProvider, ResourceProvider,
// ActionProvider, ConnectionProvider and, optionally, Watcher. Every method takes a
// context.Context: a provider may answer from a remote system (a database, another
// process over gRPC), and the gateway cancels in-flight work on shutdown, unload and client
// cancellation. docs/plugins.md is the user-facing description.
package plugin

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Plugin is what a resource provider implements. ActionProvider and Watcher are optional:
// Load and the generated tools use them when the value also implements them.
type Plugin interface {
	TypeProvider
	ResourceProvider
	ConnectionProvider
}

// KeySeparator separates the parts of a resource key: group::version::kind.
const KeySeparator = "::"

// Key joins a resource key: Key("apps", "v1", "Deployment") is "apps::v1::Deployment".
func Key(group, version, kind string) string {
	return group + KeySeparator + version + KeySeparator + kind
}

// SplitKey splits a resource key into group, version and kind. Each part must be non-empty
// and must not contain the separator.
func SplitKey(key string) (group, version, kind string, err error) {
	parts := strings.Split(key, KeySeparator)
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return "", "", "", fmt.Errorf("resource key %q is not group::version::kind", key)
	}
	return parts[0], parts[1], parts[2], nil
}

// ErrNotFound is wrapped by provider errors that mean "no such resource" or "no such
// resource type on this connection". Load treats a type whose schema, filter fields or
// actions are ErrNotFound on a connection as absent from that connection.
var ErrNotFound = errors.New("not found")

// ErrUnsupported is wrapped by provider errors for an operation a type does not offer.
var ErrUnsupported = errors.New("not supported")

// ResourceType is one kind of resource a provider serves.
type ResourceType struct {
	Key         string // group::version::kind
	Description string // one line, shown in tool descriptions
}

// Capabilities says which operations a resource type offers. Tool generation follows it:
// one tool per true Can* flag, except find, which also needs Filterable.
type Capabilities struct {
	CanGet    bool // a get tool: ResourceProvider.Get
	CanList   bool // a list tool: ResourceProvider.List
	CanFind   bool // a find tool (with Filterable): ResourceProvider.Find
	CanCreate bool // a create tool: ResourceProvider.Create
	CanUpdate bool // an update tool: ResourceProvider.Update
	CanDelete bool // a delete tool: ResourceProvider.Delete
	// Filterable: FilterFields answers, so Find can take predicates.
	Filterable bool
	// HasSchema: ResourceSchema answers with the JSON Schema of one resource.
	HasSchema bool
	// HasActions: the provider is also an ActionProvider for this type.
	HasActions bool
}

// TypeProvider describes a provider's resource types.
type TypeProvider interface {
	// ResourceTypes lists every type the provider serves, on any connection.
	ResourceTypes(ctx context.Context) ([]ResourceType, error)
	// Capabilities of one type.
	Capabilities(ctx context.Context, key string) (Capabilities, error)
	// FilterFields lists the fields Find may filter the type on, on one connection.
	FilterFields(ctx context.Context, conn, key string) ([]FilterField, error)
	// ResourceSchema is the JSON Schema of one resource of the type, on one connection.
	// It should be an object schema; its properties are what Create and Update accept.
	ResourceSchema(ctx context.Context, conn, key string) (*jsonschema.Schema, error)
}

// FieldType is the JSON type of a filter field's values.
type FieldType string

// The filter field types.
const (
	FieldString  FieldType = "string"
	FieldInteger FieldType = "integer"
	FieldNumber  FieldType = "number"
	FieldBoolean FieldType = "boolean"
)

// Operator is a comparison in a Find predicate.
type Operator string

// The operators. in takes an array of values; is_null takes true (IS NULL) or false
// (IS NOT NULL); contains is a substring match on strings.
const (
	OpEq       Operator = "eq"
	OpNeq      Operator = "neq"
	OpLt       Operator = "lt"
	OpLte      Operator = "lte"
	OpGt       Operator = "gt"
	OpGte      Operator = "gte"
	OpIn       Operator = "in"
	OpContains Operator = "contains"
	OpIsNull   Operator = "is_null"
)

// Operators lists every operator in the order tool schemas show them.
var Operators = []Operator{OpEq, OpNeq, OpLt, OpLte, OpGt, OpGte, OpIn, OpContains, OpIsNull}

// FilterField is one field Find can filter on.
type FilterField struct {
	Field       string     // the field's name in the resource
	Type        FieldType  // the JSON type of its values
	Operators   []Operator // the operators Find accepts on it
	Description string     // one line, shown in the find tool's schema
}

// ResourceProvider does the work. conn is a connection id from ConnectionProvider; key a
// resource key from ResourceTypes. Errors reach the client as the text of an isError
// result, so they should say what was wrong in the caller's terms.
type ResourceProvider interface {
	// Get returns one resource (an error wrapping ErrNotFound when there is none).
	Get(ctx context.Context, conn, key string, in GetInput) (Resource, error)
	// List returns one page of the type's resources.
	List(ctx context.Context, conn, key string, in ListInput) (Page, error)
	// Find returns one page of the resources that match in.Filter (Capabilities.CanFind
	// and Filterable; its predicates use the fields and operators of FilterFields).
	Find(ctx context.Context, conn, key string, in FindInput) (Page, error)
	// Create makes a resource and returns it as stored.
	Create(ctx context.Context, conn, key string, in CreateInput) (Resource, error)
	// Update changes the fields of in.Data and returns the resource as stored.
	Update(ctx context.Context, conn, key string, in UpdateInput) (Resource, error)
	// Delete returns the resource it deleted.
	Delete(ctx context.Context, conn, key string, in DeleteInput) (Resource, error)
}

// Resource is one resource as JSON-shaped data: it must marshal to a JSON object that
// matches the type's ResourceSchema.
type Resource = map[string]any

// Page is one page of List or Find. NextCursor is empty on the last page.
type Page struct {
	Items      []Resource // the page's resources
	NextCursor string     // ListInput.Cursor for the next page; empty on the last
}

// GetInput names one resource. Namespace is empty when the caller gave none.
type GetInput struct {
	ID        string // the resource's id
	Namespace string // the namespace the caller gave, or empty
}

// DeleteInput names one resource.
type DeleteInput = GetInput

// ListInput pages through resources, in the given namespaces (all when empty).
type ListInput struct {
	Namespaces []string // only these namespaces; all when empty
	PageSize   int      // 0: the provider's default
	Cursor     string   // a Page.NextCursor; empty for the first page
}

// FindInput is ListInput plus a filter.
type FindInput struct {
	ListInput
	Filter Filter // what the resources must match
}

// Filter is an AND of predicates plus an optional free-text query.
type Filter struct {
	Predicates []Predicate // all must hold
	TextQuery  string      // free text the resource must contain (empty: none)
}

// Predicate is one {field, operator, value} condition. Value is a JSON value: nil, bool,
// string, int64 (integral numbers), float64, or []any for OpIn. For OpIsNull it is a bool.
type Predicate struct {
	Field    string   // a FilterField's Field
	Operator Operator // one of that field's Operators
	Value    any      // the value compared with
}

// CreateInput is a new resource's data (the tool's arguments minus connectionId and
// namespace).
type CreateInput struct {
	Namespace string         // the namespace the caller gave, or empty
	Data      map[string]any // the resource's fields, checked against ResourceSchema
}

// UpdateInput names a resource and carries the fields to change.
type UpdateInput struct {
	ID        string         // the resource's id
	Namespace string         // the namespace the caller gave, or empty
	Data      map[string]any // the fields to change
}

// ActionProvider offers operations beyond CRUD (scale, restart, count, truncate...).
type ActionProvider interface {
	// Actions lists the actions of a type on one connection (Capabilities.HasActions).
	Actions(ctx context.Context, conn, key string) ([]Action, error)
	// ExecuteAction runs the action actionID (an Action.ID of Actions) on a resource, or
	// on the type for a Collection action.
	ExecuteAction(ctx context.Context, conn, key, actionID string, in ActionInput) (ActionResult, error)
}

// Action describes one action of a resource type.
type Action struct {
	ID          string // becomes the last part of the tool name
	Description string // one line, shown in the tool's description
	// ParamsSchema is an object schema of the action's own parameters (nil: none). The tool's
	// input schema is it merged with {connectionId, id, namespace?}.
	ParamsSchema *jsonschema.Schema
	// OutputSchema is the object schema of ActionResult.Data (nil: none).
	OutputSchema *jsonschema.Schema
	// Dangerous actions are hidden from read-only sessions, marked destructiveHint, and
	// need the caller's confirmation.
	Dangerous bool
	// Idempotent: calling it twice with the same arguments has the effect of calling it once.
	Idempotent bool
	// ReadOnly: the action changes nothing (count, logs). Its tool is annotated
	// readOnlyHint, so read-only sessions keep it; any other action may write and is
	// hidden from them. ReadOnly and Dangerous together are a contradiction: Dangerous wins.
	ReadOnly bool
	// Collection actions act on the resource type as a whole (count, truncate): their tool
	// takes no id.
	Collection bool
}

// ActionInput is an action call. ID is empty for Collection actions.
type ActionInput struct {
	ID        string         // the resource's id; empty for a Collection action
	Namespace string         // the namespace the caller gave, or empty
	Params    map[string]any // the action's parameters, checked against ParamsSchema
}

// ActionResult is what an action returns. Data, when not nil, is the structured result and
// must match the action's OutputSchema; Message is shown to the client as text when Data is
// nil.
type ActionResult struct {
	Data    map[string]any // the structured result, or nil
	Message string         // the text result when Data is nil
}

// ConnectionProvider lists what a provider can connect to: clusters, databases, accounts.
type ConnectionProvider interface {
	// Connections lists the provider's connections; their IDs are the conn of every other
	// call.
	Connections(ctx context.Context) ([]Connection, error)
	// Namespaces lists the namespaces of one connection (nil: it has none).
	Namespaces(ctx context.Context, conn string) ([]string, error)
}

// ConnectionStatus is a connection's state as the provider sees it.
type ConnectionStatus string

// The connection states.
const (
	StatusConnected    ConnectionStatus = "connected"
	StatusDisconnected ConnectionStatus = "disconnected"
	StatusError        ConnectionStatus = "error"
)

// Connection is one configured connection.
type Connection struct {
	ID          string           // the conn of the provider's calls; stable
	Name        string           // for people; the ID when empty
	Status      ConnectionStatus // as the provider sees it
	Description string           // one line, shown by list_connections
}

// Watcher is optional: a provider that can report changes to resources.
type Watcher interface {
	// Subscribe returns a channel of changes to resources of key on conn. The channel
	// closes when ctx ends, or when the subscriber falls too far behind to be kept (it then
	// re-lists and subscribes again).
	Subscribe(ctx context.Context, conn, key string) (<-chan Event, error)
}

// EventType says what happened to a resource.
type EventType string

// The event types.
const (
	EventAdd    EventType = "ADD"
	EventUpdate EventType = "UPDATE"
	EventDelete EventType = "DELETE"
)

// Event is one change. An empty ID means the change concerned the whole type (a truncate):
// a subscriber re-lists.
type Event struct {
	Type       EventType // what happened
	Connection string    // the connection it happened on
	Key        string    // the resource type's key
	ID         string    // the resource's id; empty for the whole type
	Namespace  string    // the resource's namespace, or empty
}
