// Package auth decides who is calling and what they may see: credentials (API keys, JWT,
// OAuth 2.1 access tokens), identity headers, the per-session resolution of servers, the
// one tool decision function, and the audit log.
package auth
