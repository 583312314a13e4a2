package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// shapeHash is the documented hash of ShapeName: the first 4 bytes of sha256(exposed), in
// hex. Written out here so that a change of the hash (which renames every shaped tool of
// every running gateway) fails a test.
func shapeHash(exposed string) string {
	sum := sha256.Sum256([]byte(exposed))
	return hex.EncodeToString(sum[:4])
}

var copilotRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,128}$`)

func TestShapeNameFitsUnchanged(t *testing.T) {
	for _, tt := range []struct {
		name string
		max  int
		re   *regexp.Regexp
	}{
		{"github__create_issue", 60, nil},
		{"github__create_issue", 20, nil}, // exactly max
		{"github__create-issue", 64, copilotRE},
		{"echo", 16, nil},
		{strings.Repeat("a", 64), 0, nil}, // max 0 reads as 64
	} {
		if got := ShapeName(tt.name, "__", tt.max, tt.re); got != tt.name {
			t.Errorf("ShapeName(%q, %d) = %q; a name that fits comes back unchanged", tt.name, tt.max, got)
		}
	}
}

func TestShapeNameShapes(t *testing.T) {
	longServer := "my_extremely_long_server_name_for_the_billing_department"
	longTool := "list_all_pull_request_review_comments_for_the_repository_owner_organisation"
	tests := []struct {
		why, exposed string
		max          int
		want         string
	}{
		{"long server + short tool: the server is cut, the tool kept whole",
			longServer + "__create_issue", 40,
			longServer[:17] + "_" + shapeHash(longServer+"__create_issue") + "__create_issue"},
		{"a long tool alone is cut and given the hash",
			longTool, 60,
			longTool[:51] + "_" + shapeHash(longTool)},
		{"a tool too long to keep whole beside any server part: the tool is cut, the server left out",
			"github__" + longTool, 60,
			longTool[:51] + "_" + shapeHash("github__"+longTool)},
		{"characters a name may not hold are replaced, and the hash added",
			"github__create.issue", 64,
			"github__create_issue_" + shapeHash("github__create.issue")},
		{"a name too long by one",
			"abcdefghijklmnopqrst__" + strings.Repeat("t", 9), 30,
			"abcdefghij_" + shapeHash("abcdefghijklmnopqrst__"+strings.Repeat("t", 9)) + "__" + strings.Repeat("t", 9)},
		{"a server part that would be cut to nothing is left out, the tool kept whole",
			"abcdefghij__" + strings.Repeat("t", 9), 20,
			strings.Repeat("t", 9) + "_" + shapeHash("abcdefghij__"+strings.Repeat("t", 9))},
		{"empty",
			"", 32,
			"_" + shapeHash("")},
	}
	for _, tt := range tests {
		got := ShapeName(tt.exposed, "__", tt.max, nil)
		if got != tt.want {
			t.Errorf("%s:\nShapeName(%q, %d) = %q\nwant                %q", tt.why, tt.exposed, tt.max, got, tt.want)
		}
		if len(got) > tt.max || !nameChars.MatchString(got) {
			t.Errorf("%s: %q breaks ^[A-Za-z0-9_-]{1,%d}$", tt.why, got, tt.max)
		}
	}
}

func TestShapeNameOtherSeparator(t *testing.T) {
	exposed := strings.Repeat("s", 30) + "-echo"
	got := ShapeName(exposed, "-", 24, nil)
	want := strings.Repeat("s", 10) + "_" + shapeHash(exposed) + "-echo"
	if got != want {
		t.Errorf("ShapeName(%q, \"-\", 24) = %q, want %q", exposed, got, want)
	}
	// No separator in the name: a bare tool.
	if got := ShapeName(strings.Repeat("t", 30), "__", 20, nil); got != strings.Repeat("t", 11)+"_"+shapeHash(strings.Repeat("t", 30)) {
		t.Errorf("bare tool: got %q", got)
	}
}

func TestShapeNamePattern(t *testing.T) {
	exposed := "Billing-Service-Production__Create-Invoice"
	tests := []struct {
		re  string
		max int
	}{
		{`^[a-zA-Z0-9_-]{1,128}$`, 40},
		{`^[a-z0-9_]+$`, 60},           // no capitals, no dash: a fitting name is reshaped
		{`^[a-z][a-z0-9_]{0,29}$`, 60}, // and shorter than max
		{`^[A-Za-z0-9]+_[0-9a-f]{8}`, 64},
	}
	for _, tt := range tests {
		re := regexp.MustCompile(tt.re)
		got := ShapeName(exposed, "__", tt.max, re)
		if !re.MatchString(got) || len(got) > tt.max || !nameChars.MatchString(got) {
			t.Errorf("ShapeName(%q, %d, %s) = %q: breaks the pattern or the limit", exposed, tt.max, tt.re, got)
		}
		if !strings.Contains(got, shapeHash(exposed)) {
			t.Errorf("ShapeName(%q, %s) = %q carries no hash: a reshaped name must stay distinct", exposed, tt.re, got)
		}
	}
	// A pattern no name can match: the plain shape, still within the limit.
	got := ShapeName(exposed, "__", 30, regexp.MustCompile(`^\.$`))
	if want := ShapeName(exposed, "__", 30, nil); got != want {
		t.Errorf("an impossible pattern: got %q, want the plain shape %q", got, want)
	}
}

// TestShapeNameDistinct: many names that share long prefixes stay distinct at the lengths
// clients impose, always keep to the limit and the character set, and keep the tool's own
// name whole wherever it fits beside the hash.
func TestShapeNameDistinct(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 26))
	servers := []string{"github", "my_extremely_long_server_name_for_the_billing_department", "filesystem", "shop_shop_v1", strings.Repeat("x", 40)}
	verbs := []string{"list", "get", "create", "update", "delete", "search", "find"}
	inputs := map[string]bool{}
	for len(inputs) < 5000 {
		server := servers[r.IntN(len(servers))]
		tool := fmt.Sprintf("%s_all_pull_request_review_comments_for_the_repository_%d", verbs[r.IntN(len(verbs))], r.IntN(2000))
		if r.IntN(3) == 0 {
			tool = fmt.Sprintf("%s_%d", verbs[r.IntN(len(verbs))], r.IntN(500))
		}
		inputs[server+"__"+tool] = true
	}
	for _, max := range []int{60, 40, 32} {
		seen := make(map[string]string, len(inputs))
		for in := range inputs {
			got := ShapeName(in, "__", max, copilotRE)
			if len(got) > max || !nameChars.MatchString(got) || !copilotRE.MatchString(got) {
				t.Fatalf("ShapeName(%q, %d) = %q breaks the limit or the pattern", in, max, got)
			}
			if prev, ok := seen[got]; ok {
				t.Fatalf("max %d: %q and %q both shape to %q", max, prev, in, got)
			}
			seen[got] = in
			_, tool, _ := strings.Cut(in, "__")
			if len(in) > max && len(tool)+2+1+hashLen+1 <= max && !strings.HasSuffix(got, "__"+tool) {
				t.Errorf("max %d: %q shaped to %q, losing the tool's own name", max, in, got)
			}
			if again := ShapeName(in, "__", max, copilotRE); again != got {
				t.Fatalf("not deterministic: %q then %q", got, again)
			}
		}
	}
}

// FuzzShapeName holds the invariants over any input: within the limit, the character set
// and the pattern, unchanged when it fits, and the same answer twice.
func FuzzShapeName(f *testing.F) {
	f.Add("github__create_issue", "__", 40)
	f.Add("a.b/c d__é", "__", 16)
	f.Add(strings.Repeat("s", 100)+"-t", "-", 20)
	re := regexp.MustCompile(`^[a-z0-9_]+$`)
	f.Fuzz(func(t *testing.T, exposed, sep string, max int) {
		if max < 16 || max > 128 {
			return
		}
		for _, p := range []*regexp.Regexp{nil, copilotRE, re} {
			got := ShapeName(exposed, sep, max, p)
			if len(got) > max || !nameChars.MatchString(got) {
				t.Fatalf("ShapeName(%q, %q, %d) = %q breaks ^[A-Za-z0-9_-]{1,%d}$", exposed, sep, max, got, max)
			}
			if p != nil && !p.MatchString(got) {
				t.Fatalf("ShapeName(%q, %q, %d, %s) = %q breaks the pattern", exposed, sep, max, p, got)
			}
			if got != ShapeName(exposed, sep, max, p) {
				t.Fatal("not deterministic")
			}
		}
	})
}
