package oauth

import (
	"net/http"
	"strings"
)

// Challenge is one challenge of a WWW-Authenticate header (RFC 7235 §4.1): a scheme and its
// parameters, whose names are lower-cased (they are case-insensitive) and whose values are
// unquoted. Bearer (RFC 6750) and DPoP (RFC 9449) challenges carry resource_metadata
// (RFC 9728 §5.1), scope, error and error_description.
type Challenge struct {
	Scheme  string            // as sent, e.g. "Bearer"
	Params  map[string]string // lower-cased names; the first of a repeated name wins
	Token68 string            // a token68 in place of parameters (Basic, Negotiate)
}

// ResourceMetadata is the URL of the server's protected resource metadata, if given.
func (c Challenge) ResourceMetadata() string { return c.Params["resource_metadata"] }

// Scopes are the scopes the challenge asks for (RFC 6750 §3), nil when none.
func (c Challenge) Scopes() []string { return strings.Fields(c.Params["scope"]) }

// ErrorCode is the challenge's error parameter: invalid_token, insufficient_scope, ...
func (c Challenge) ErrorCode() string { return c.Params["error"] }

// InsufficientScope reports a step-up challenge (RFC 6750 §3.1).
func (c Challenge) InsufficientScope() bool { return c.ErrorCode() == "insufficient_scope" }

// ParseChallenge is the challenge an OAuth client answers: the first Bearer challenge of the
// header's lines, else the first DPoP one, else the first of any scheme; the zero value
// when the header is absent or holds none.
func ParseChallenge(h http.Header) Challenge {
	all := ParseChallenges(h)
	for _, scheme := range []string{"Bearer", "DPoP"} {
		for _, c := range all {
			if strings.EqualFold(c.Scheme, scheme) {
				return c
			}
		}
	}
	if len(all) > 0 {
		return all[0]
	}
	return Challenge{}
}

// ParseChallenges reads every challenge of every WWW-Authenticate line of h (the name
// matched case-insensitively even in a map built by hand). It never fails: what it cannot
// read it skips.
func ParseChallenges(h http.Header) []Challenge {
	var lines []string
	for name, vals := range h {
		if strings.EqualFold(name, "WWW-Authenticate") {
			lines = append(lines, vals...)
		}
	}
	var out []Challenge
	for _, line := range lines {
		out = append(out, parseChallengeLine(line)...)
	}
	return out
}

// challengeScanner walks one header line.
type challengeScanner struct {
	s string
	i int
}

func parseChallengeLine(line string) []Challenge {
	p := &challengeScanner{s: line}
	var out []Challenge
	for {
		p.skip(" \t,")
		if p.i >= len(p.s) {
			return out
		}
		scheme := p.token()
		if scheme == "" {
			p.i++ // a character no challenge starts with: skip it
			continue
		}
		c := Challenge{Scheme: scheme, Params: map[string]string{}}
		p.skip(" \t")
		if t68, ok := p.token68(); ok {
			c.Token68 = t68
		} else {
			p.params(c.Params)
		}
		out = append(out, c)
	}
}

// params reads auth-params separated by commas until what follows is not a parameter
// (the next challenge's scheme, or the end).
func (p *challengeScanner) params(into map[string]string) {
	for {
		save := p.i
		p.skip(" \t,")
		name := p.token()
		p.skip(" \t")
		if name == "" || !p.at('=') {
			p.i = save
			return
		}
		p.i++ // '='
		p.skip(" \t")
		var value string
		if p.at('"') {
			value = p.quoted()
		} else {
			value = p.token()
		}
		key := strings.ToLower(name)
		if _, seen := into[key]; !seen {
			into[key] = value
		}
	}
}

// token68 reads a token68 (RFC 7235 §2.1) if one stands here: its characters, then any
// '=' padding, then the end or a comma.
func (p *challengeScanner) token68() (string, bool) {
	j := p.i
	for j < len(p.s) && isToken68Char(p.s[j]) {
		j++
	}
	if j == p.i {
		return "", false
	}
	for j < len(p.s) && p.s[j] == '=' {
		j++
	}
	k := j
	for k < len(p.s) && (p.s[k] == ' ' || p.s[k] == '\t') {
		k++
	}
	if k < len(p.s) && p.s[k] != ',' {
		return "", false
	}
	t := p.s[p.i:j]
	p.i = j
	return t, true
}

func (p *challengeScanner) at(b byte) bool { return p.i < len(p.s) && p.s[p.i] == b }

func (p *challengeScanner) skip(set string) {
	for p.i < len(p.s) && strings.IndexByte(set, p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *challengeScanner) token() string {
	start := p.i
	for p.i < len(p.s) && isTokenChar(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

// quoted reads a quoted-string from its opening quote, undoing backslash escapes; an
// unterminated one runs to the end of the line.
func (p *challengeScanner) quoted() string {
	p.i++ // opening quote
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		switch {
		case c == '"':
			return b.String()
		case c == '\\' && p.i < len(p.s):
			b.WriteByte(p.s[p.i])
			p.i++
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// isTokenChar: tchar of RFC 9110 §5.6.2.
func isTokenChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

func isToken68Char(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("-._~+/", c) >= 0
}
