package admin

import (
	"net/http"
	"regexp"
	"strings"

	"github.com/gorilla/mux"
)

// OpenAPI builds the OpenAPI 3.1 document of the admin API from the same route table the
// router is built from, so that no route can be served without being described.
func OpenAPI(routes []Route, version string) map[string]any {
	paths := map[string]any{}
	param := regexp.MustCompile(`\{([a-z]+)\}`)
	for _, rt := range routes {
		item, _ := paths[rt.Path].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[rt.Path] = item
		}
		op := map[string]any{
			"summary":     rt.Summary,
			"operationId": strings.ToLower(rt.Method) + opName(rt.Path),
			"responses":   responsesFor(rt.Method),
		}
		var params []any
		for _, m := range param.FindAllStringSubmatch(rt.Path, -1) {
			params = append(params, map[string]any{"name": m[1], "in": "path", "required": true, "schema": map[string]any{"type": "string"}})
		}
		if rt.Method == http.MethodPut || rt.Method == http.MethodPatch || rt.Method == http.MethodDelete {
			params = append(params, map[string]any{"name": "If-Match", "in": "header", "required": false,
				"description": "the ETag last read; a stale one is refused with 412", "schema": map[string]any{"type": "string"}})
		}
		if params != nil {
			op["parameters"] = params
		}
		if (rt.Method == http.MethodPost || rt.Method == http.MethodPut || rt.Method == http.MethodPatch) && !strings.HasSuffix(rt.Path, "/restart") {
			ct := "application/json"
			if rt.Method == http.MethodPatch {
				ct = "application/merge-patch+json"
			}
			op["requestBody"] = map[string]any{"required": true, "content": map[string]any{ct: map[string]any{"schema": map[string]any{"type": "object"}}}}
		}
		item[strings.ToLower(rt.Method)] = op
	}
	return map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{"title": "mcpgw admin API", "version": version,
			"description": "Servers, agents, executors and tasks of a running mcpgw, applied live (docs/admin-api.md)."},
		"components": map[string]any{
			"securitySchemes": map[string]any{"adminToken": map[string]any{"type": "http", "scheme": "bearer",
				"description": "auth.admin_token; without one only loopback callers in auth mode none"}},
			"schemas": map[string]any{"Error": map[string]any{"type": "object", "required": []string{"error"}, "properties": map[string]any{
				"error":    map[string]any{"type": "string"},
				"errors":   map[string]any{"type": "array", "items": map[string]any{"$ref": "#/components/schemas/FieldError"}},
				"warnings": map[string]any{"type": "array", "items": map[string]any{"$ref": "#/components/schemas/FieldError"}},
			}}, "FieldError": map[string]any{"type": "object", "required": []string{"message"}, "properties": map[string]any{
				"field": map[string]any{"type": "string"}, "message": map[string]any{"type": "string"},
			}}},
		},
		"security": []any{map[string]any{"adminToken": []any{}}},
		"paths":    paths,
	}
}

func opName(path string) string {
	var b strings.Builder
	for _, part := range strings.Split(strings.TrimPrefix(path, "/api/"), "/") {
		part = strings.Trim(part, "{}")
		if part == "" {
			continue
		}
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

func responsesFor(method string) map[string]any {
	errRef := map[string]any{"content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/Error"}}}}
	withDesc := func(d string) map[string]any {
		m := map[string]any{"description": d}
		for k, v := range errRef {
			m[k] = v
		}
		return m
	}
	r := map[string]any{
		"401": withDesc("admin token missing or wrong"),
		"403": withDesc("no admin token configured and the caller is not loopback in auth mode none, or a foreign Origin"),
	}
	switch method {
	case http.MethodGet:
		r["200"] = map[string]any{"description": "the resource"}
		r["404"] = withDesc("no such entity")
	case http.MethodPost:
		r["201"] = map[string]any{"description": "created"}
		r["200"] = map[string]any{"description": "valid (dry run)"}
		r["400"] = withDesc("bad JSON, an unknown field, or a config that would be invalid")
		r["409"] = withDesc("the name exists, or the config file manages it")
	case http.MethodPut, http.MethodPatch:
		r["200"] = map[string]any{"description": "changed"}
		r["201"] = map[string]any{"description": "created (PUT of a new agent or executor)"}
		r["400"] = withDesc("bad JSON, an unknown field, or a config that would be invalid")
		r["404"] = withDesc("no such entity")
		r["409"] = withDesc("the config file manages it")
		r["412"] = withDesc("If-Match names an older version")
	case http.MethodDelete:
		r["204"] = map[string]any{"description": "deleted"}
		r["400"] = withDesc("the config would be invalid without it")
		r["404"] = withDesc("no such entity")
		r["409"] = withDesc("the config file manages it")
		r["412"] = withDesc("If-Match names an older version")
	}
	return r
}

// ServeOpenAPI answers the OpenAPI document of the API's route table.
func (a *API) ServeOpenAPI(w http.ResponseWriter, r *http.Request) {
	JSON(w, http.StatusOK, OpenAPI(a.routes(), a.version))
}

// Paths lists the admin API's routes as a router built by Router serves them
// ("GET /api/servers"), read back from the router itself.
func Paths(router *mux.Router) []string {
	var out []string
	_ = router.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		path, err := route.GetPathTemplate()
		if err != nil || !strings.HasPrefix(path, "/api") {
			return nil // the web UI's routes (and its copy of the API under /ui/api)
		}
		methods, err := route.GetMethods()
		if err != nil {
			return nil // the /api prefix itself
		}
		for _, m := range methods {
			out = append(out, m+" "+path)
		}
		return nil
	})
	return out
}
