package admin

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// The orchestrator seed keeps an executor's policy as a JSON string,
// {"config": {"mcp_policy": "<policy as JSON>"}}, and calls url_rewrite by its older name
// http_url_rewrite (the config file migrates that key: config/migrate.go). A body in
// either shape is rewritten to the gateway's own, {"mcp_policy": {…, "url_rewrite": …}},
// before the strict decode, so the policy is validated as any other and stored, and
// answered, in one shape.

// normalizeExecutorBody turns the seed's shape of an executor body into the gateway's.
// A body that is not a JSON object is returned as it is: the strict decode says why.
func normalizeExecutorBody(body []byte) ([]byte, []FieldError) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) != nil || obj == nil {
		return body, nil
	}
	policyField := "mcp_policy"
	if raw, ok := obj["config"]; ok {
		pol, errs := seedConfigPolicy(raw)
		if errs != nil {
			return nil, errs
		}
		if _, both := obj["mcp_policy"]; both && pol != nil {
			return nil, []FieldError{{Field: "config.mcp_policy", Message: "config.mcp_policy and mcp_policy are the same policy; send one"}}
		}
		delete(obj, "config")
		if pol != nil {
			obj["mcp_policy"], policyField = pol, "config.mcp_policy"
		}
	}
	if raw, ok := obj["mcp_policy"]; ok && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		pol, errs := renamePolicyAliases(raw, policyField)
		if errs != nil {
			return nil, errs
		}
		obj["mcp_policy"] = pol
		if policyField != "mcp_policy" {
			// Checked here, so that a field of the string is named as the user wrote it.
			var d policyDoc
			if errs := DecodeStrict(pol, &d, nil); errs != nil {
				return nil, prefixFields(errs, policyField)
			}
		}
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return nil, []FieldError{{Message: "bad JSON: " + err.Error()}}
	}
	return out, nil
}

// seedConfigPolicy reads the seed's "config" object: its mcp_policy, a JSON string (or
// already an object), and nothing else. nil: config holds no policy.
func seedConfigPolicy(raw json.RawMessage) (json.RawMessage, []FieldError) {
	var cfg map[string]json.RawMessage
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return nil, []FieldError{{Field: "config", Message: "must be an object such as {\"mcp_policy\": \"{…}\"}"}}
	}
	var errs []FieldError
	for k := range cfg {
		if k != "mcp_policy" {
			errs = append(errs, FieldError{Field: "config." + k, Message: fmt.Sprintf("unknown field %q (config takes mcp_policy only)", "config."+k)})
		}
	}
	if errs != nil {
		return nil, errs
	}
	pol, ok := cfg["mcp_policy"]
	if !ok || bytes.Equal(bytes.TrimSpace(pol), []byte("null")) {
		return nil, nil
	}
	var s string
	if json.Unmarshal(pol, &s) != nil {
		return pol, nil // an object: as the gateway's own shape
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &probe); err != nil || probe == nil {
		why := "a JSON null"
		if err != nil {
			why = jsonErrorText([]byte(s), err)
		}
		return nil, []FieldError{{Field: "config.mcp_policy", Message: "the string is not a JSON object: " + why}}
	}
	return json.RawMessage(s), nil
}

// renamePolicyAliases renames the seed's policy keys to the gateway's; where names the
// policy in errors.
func renamePolicyAliases(raw json.RawMessage, where string) (json.RawMessage, []FieldError) {
	var pol map[string]json.RawMessage
	if json.Unmarshal(raw, &pol) != nil || pol == nil {
		return raw, nil // not an object: the strict decode says so
	}
	renamed := false
	// The policy keys the seed spells differently.
	for alias, field := range map[string]string{"http_url_rewrite": "url_rewrite"} {
		v, ok := pol[alias]
		if !ok {
			continue
		}
		if _, both := pol[field]; both {
			return nil, []FieldError{{Field: where + "." + alias, Message: fmt.Sprintf("%s and %s are the same field; send one", alias, field)}}
		}
		pol[field], renamed = v, true
		delete(pol, alias)
	}
	if !renamed {
		return raw, nil
	}
	out, _ := json.Marshal(pol)
	return out, nil
}

// prefixFields names errors of a nested document by their path in the body.
func prefixFields(errs []FieldError, prefix string) []FieldError {
	out := make([]FieldError, len(errs))
	for i, e := range errs {
		out[i] = e
		if e.Field == "" {
			out[i].Field = prefix
		} else {
			out[i].Field = prefix + "." + e.Field
		}
	}
	return out
}
