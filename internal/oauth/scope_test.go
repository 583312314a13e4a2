package oauth

import (
	"errors"
	"slices"
	"testing"
)

func TestSelectScopes(t *testing.T) {
	withScope := Challenge{Scheme: "Bearer", Params: map[string]string{"scope": "mcp:basic"}}
	prm := &ResourceMetadata{ScopesSupported: []string{"mcp:basic", "mcp:read", "mcp:write"}}
	asOffline := &ServerMetadata{ScopesSupported: []string{"mcp:basic", OfflineAccess}}
	asPlain := &ServerMetadata{ScopesSupported: []string{"mcp:basic", "mcp:read"}}
	cases := []struct {
		name    string
		ch      Challenge
		prm     *ResourceMetadata
		as      *ServerMetadata
		offline bool
		want    []string
	}{
		{"challenge wins", withScope, prm, asPlain, false, []string{"mcp:basic"}},
		{"scopes_supported when the challenge has none", Challenge{}, prm, asPlain, false, prm.ScopesSupported},
		{"none at all: omitted", Challenge{}, &ResourceMetadata{}, &ServerMetadata{}, true, nil},
		{"no resource metadata (2025-03-26)", Challenge{}, nil, asPlain, false, nil},
		{"offline_access when the AS lists it", withScope, prm, asOffline, true, []string{"mcp:basic", OfflineAccess}},
		{"never when it does not", withScope, prm, asPlain, true, []string{"mcp:basic"}},
		{"not twice", Challenge{Params: map[string]string{"scope": "offline_access"}}, nil, asOffline, true, []string{OfflineAccess}},
		{"not unless wanted", withScope, prm, asOffline, false, []string{"mcp:basic"}},
	}
	for _, tc := range cases {
		got := SelectScopes(tc.ch, tc.prm, tc.as, tc.offline)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	// The metadata's list is not aliased: appending must not write into it.
	got := SelectScopes(Challenge{}, prm, asOffline, true)
	if len(prm.ScopesSupported) != 3 || !slices.Contains(got, OfflineAccess) {
		t.Errorf("aliasing: %q / %q", got, prm.ScopesSupported)
	}
}

func TestStepUp(t *testing.T) {
	ch := Challenge{Params: map[string]string{"error": "insufficient_scope", "scope": "mcp:write"}}
	got, err := StepUp([]string{"mcp:basic"}, ch, 0, 0)
	if err != nil || !slices.Equal(got, []string{"mcp:basic", "mcp:write"}) {
		t.Fatalf("union %q %v", got, err)
	}
	// Nothing new asked for: the scope will never be granted by asking again.
	_, err = StepUp([]string{"mcp:admin"}, Challenge{Params: map[string]string{"scope": "mcp:admin"}}, 0, 0)
	var ise *InsufficientScopeError
	if !errors.Is(err, ErrStepUpLimit) || !errors.As(err, &ise) || !slices.Equal(ise.Scopes, []string{"mcp:admin"}) {
		t.Errorf("no progress: %v", err)
	}
	// The bound: DefaultMaxStepUps re-authorizations, then give up.
	if _, err := StepUp(nil, ch, DefaultMaxStepUps, 0); !errors.Is(err, ErrStepUpLimit) {
		t.Errorf("over the default bound: %v", err)
	}
	if _, err := StepUp(nil, ch, 4, 5); err != nil {
		t.Errorf("under an explicit bound: %v", err)
	}
	if _, err := StepUp([]string{"a"}, Challenge{}, 0, 0); !errors.Is(err, ErrStepUpLimit) {
		t.Errorf("a challenge without scope: %v", err)
	}
}
