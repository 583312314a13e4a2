package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"testing/quick"

	"github.com/mcpgw/mcpgw/config"
)

var (
	exposedRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	nameChars = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
)

func TestExposedName(t *testing.T) {
	always := config.Naming{Prefix: "always", Separator: "__", MaxLength: 64}
	never := config.Naming{Prefix: "never", Separator: "__", MaxLength: 64}
	dash := config.Naming{Prefix: "always", Separator: "-", MaxLength: 64}
	long := strings.Repeat("t", 80)
	tests := []struct {
		server, name string
		n            config.Naming
		want         string
	}{
		{"github", "create_issue", always, "github__create_issue"},
		{"github", "create_issue", never, "create_issue"},
		{"github", "create_issue", dash, "github-create_issue"},
		{"github", "create-issue", always, "github__create-issue"},
		// Not allowed characters: replaced, and a stable hash suffix keeps names apart.
		{"github", "create.issue", always, "github__create_issue_3171ee16"},
		// Exactly 64 is kept; 65 is shortened to 64 with the suffix. A tool name too long to
		// keep whole beside its server is cut, and the server left out.
		{"s", strings.Repeat("x", 61), always, "s__" + strings.Repeat("x", 61)},
		{"s", strings.Repeat("x", 62), always, strings.Repeat("x", 55) + "_" + hash8("s", strings.Repeat("x", 62))},
		// A long server name is cut so that the tool's own name stays whole.
		{strings.Repeat("s", 60), "create_issue", always, strings.Repeat("s", 41) + "_" + hash8(strings.Repeat("s", 60), "create_issue") + "__create_issue"},
		// The same with a character to replace: replaced, and still cut at the server.
		{strings.Repeat("s", 60), "create.issue", always, strings.Repeat("s", 41) + "_" + hash8(strings.Repeat("s", 60), "create.issue") + "__create_issue"},
		{"srv", long, never, strings.Repeat("t", 55) + "_" + hash8("srv", long)},
		{"srv", "", never, "_" + hash8("srv", "")},
	}
	for _, tt := range tests {
		got := ExposedName(tt.server, tt.name, tt.n)
		if got != tt.want {
			t.Errorf("ExposedName(%q, %q, %s) = %q, want %q", tt.server, tt.name, tt.n.Prefix, got, tt.want)
		}
		if !exposedRE.MatchString(got) {
			t.Errorf("ExposedName(%q, %q) = %q does not match %s", tt.server, tt.name, got, exposedRE)
		}
	}
}

// hash8 is the documented suffix: the first 4 bytes of sha256(server NUL name), in hex.
func hash8(server, name string) string {
	sum := sha256.Sum256([]byte(server + "\x00" + name))
	return hex.EncodeToString(sum[:4])
}

func TestExposedNameStableAndDistinct(t *testing.T) {
	n := config.Naming{Prefix: "always", Separator: "__", MaxLength: 64}
	a := "list_all_pull_request_review_comments_for_the_repository_owner_organisation_v2"
	b := "list_all_pull_request_review_comments_for_the_repository_owner_organisation_v3"
	ea, eb := ExposedName("github", a, n), ExposedName("github", b, n)
	if ea == eb {
		t.Fatalf("distinct long names collide: %q", ea)
	}
	if len(ea) != 64 || len(eb) != 64 {
		t.Errorf("lengths %d, %d; want 64", len(ea), len(eb))
	}
	for i := 0; i < 3; i++ {
		if ExposedName("github", a, n) != ea {
			t.Fatal("not stable across calls")
		}
	}
	// The same tool name on two servers, too long to keep the server prefix readable.
	if ExposedName("s1", a, config.Naming{Prefix: "never", MaxLength: 64}) == ExposedName("s2", a, config.Naming{Prefix: "never", MaxLength: 64}) {
		t.Error("the hash ignores the server")
	}
	// A dotted and an underscored name must not meet.
	if ExposedName("s", "a.b", n) == ExposedName("s", "a_b", n) {
		t.Error("a.b and a_b expose the same name")
	}
}

// TestExposedNameProperty: whatever an upstream calls its tool, the exposed name is one
// clients accept, and different inputs stay different.
func TestExposedNameProperty(t *testing.T) {
	alphabet := []rune("abcXYZ019_-.:/ éü😀\x00\t")
	gen := func(r *rand.Rand, max int) string {
		n := r.IntN(max)
		var b strings.Builder
		for i := 0; i < n; i++ {
			b.WriteRune(alphabet[r.IntN(len(alphabet))])
		}
		return b.String()
	}
	r := rand.New(rand.NewPCG(1, 2))
	seen := map[string]string{}
	for i := 0; i < 20000; i++ {
		server, name := gen(r, 20), gen(r, 120)
		if server == "" {
			server = "s"
		}
		n := config.Naming{Prefix: []string{"always", "never"}[r.IntN(2)], Separator: []string{"__", "-", "_x_"}[r.IntN(3)], MaxLength: 16 + r.IntN(113)}
		got := ExposedName(server, name, n)
		if !nameChars.MatchString(got) || len(got) > n.MaxLength {
			t.Fatalf("ExposedName(%q, %q, %+v) = %q: breaks ^[A-Za-z0-9_-]{1,%d}$", server, name, n, got, n.MaxLength)
		}
		if n.MaxLength == 64 && n.Prefix == "always" && n.Separator == "__" {
			key := server + "\x00" + name
			if prev, ok := seen[got]; ok && prev != key {
				t.Fatalf("%q and %q both expose as %q", prev, key, got)
			}
			seen[got] = key
		}
	}
	// And with testing/quick over arbitrary strings.
	f := func(server, name string) bool {
		return exposedRE.MatchString(ExposedName(server, name, config.Naming{Prefix: "always", Separator: "__", MaxLength: 64}))
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 5000}); err != nil {
		t.Fatal(err)
	}
}

func TestExposeToolRenamesAndOrders(t *testing.T) {
	n := config.Naming{Prefix: "always", Separator: "__", MaxLength: 64}
	raw := []byte(`{"name":"echo","inputSchema":{"type":"object"},"description":"Echo","annotations":{"readOnlyHint":true,"destructiveHint":false}}`)
	tool, err := ExposeTool("srv", raw, n)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"annotations":{"readOnlyHint":true,"destructiveHint":false},"description":"Echo","inputSchema":{"type":"object"},"name":"srv__echo"}`
	if string(tool.Def) != want {
		t.Errorf("Def = %s\nwant  %s", tool.Def, want)
	}
	if tool.Name != "echo" || tool.Exposed != "srv__echo" || !tool.ReadOnly || tool.Destructive {
		t.Errorf("tool = %+v", tool)
	}
	// Same definition with other key order and whitespace: same bytes.
	tool2, _ := ExposeTool("srv", []byte(`{ "description":"Echo", "annotations":{"readOnlyHint":true,"destructiveHint":false},"inputSchema":{"type":"object"},"name":"echo"}`), n)
	if string(tool2.Def) != string(tool.Def) {
		t.Errorf("key order changed the bytes:\n%s\n%s", tool2.Def, tool.Def)
	}
	plain, _ := ExposeTool("srv", []byte(`{"name":"x"}`), n)
	if plain.ReadOnly || !plain.Destructive {
		t.Errorf("without annotations: readOnly %v destructive %v; the spec defaults are false, true", plain.ReadOnly, plain.Destructive)
	}
	if _, err := ExposeTool("srv", []byte(`{"description":"nameless"}`), n); err == nil {
		t.Error("a tool without a name was accepted")
	}
}

// TestPluginToolNameKeepsOperation: a plugin tool's name cut for length keeps its
// operation whole at its end and loses the middle; a name that fits is as it was.
func TestPluginToolNameKeepsOperation(t *testing.T) {
	n := config.Naming{Prefix: "always", Separator: "__", MaxLength: 64}
	long := "k8s_apiextensions_k8s_io_v1_ClusterWideWidgetConfigurationPolicy_get"
	tests := []struct {
		full, op, want string
	}{
		{"shop_shop_v1_users_get", "get", "shop_shop_v1_users_get"},
		{long, "get", long[:64-len("_12345678_get")] + "_" + hash8("k8s", long) + "_get"},
		{"k8s_apiextensions_k8s_io_v1_ClusterWideWidgetConfigurationPolicy_restart_rollout", "restart_rollout",
			"k8s_apiextensions_k8s_io_v1_ClusterWide_" + hash8("k8s", "k8s_apiextensions_k8s_io_v1_ClusterWideWidgetConfigurationPolicy_restart_rollout") + "_restart_rollout"},
		// Characters outside the set: replaced, the hash after the whole name, as before.
		{`sql_shop_v1_odd "name_get`, "get", "sql_shop_v1_odd__name_get_" + hash8("sql", `sql_shop_v1_odd "name_get`)},
	}
	for _, tc := range tests {
		got := PluginToolName(strings.SplitN(tc.full, "_", 2)[0], tc.full, tc.op, n)
		if got != tc.want || !exposedRE.MatchString(got) {
			t.Errorf("PluginToolName(%q, %q) = %q (%d bytes), want %q", tc.full, tc.op, got, len(got), tc.want)
		}
	}
	// A client's shorter limit (ShapeName's path for plugin tools) keeps it too.
	if got := shapeKeeping(long, "", "get", 40, nil); !strings.HasSuffix(got, "_get") || len(got) != 40 {
		t.Errorf("shapeKeeping to 40 bytes: %q", got)
	}
}
