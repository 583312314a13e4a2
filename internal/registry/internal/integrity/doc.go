// Package integrity pins the definitions upstreams and plugins serve (tools, prompts,
// resource templates) by a fingerprint of their canonical JSON, and holds back any that
// changed, appeared on an established server, or look like instructions to the model,
// until an admin approves them.
package integrity
