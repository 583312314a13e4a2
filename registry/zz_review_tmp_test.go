package registry

import (
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgw/mcpgw/config"
)

func TestZZReviewExposed(t *testing.T) {
	n := config.Naming{Prefix: "always", Separator: "__", MaxLength: 64}
	for _, c := range [][2]string{
		{"my-company-internal-github-enterprise", "create_pull_request_review_comment"},
		{"github", "delete_repository_and_all_of_its_contents_forever_without_confirm"},
	} {
		e := ExposedName(c[0], c[1], n)
		m, _ := path.Match(c[0]+"__*", e)
		fmt.Printf("exposed=%q len=%d matches %q: %v\n", e, len(e), c[0]+"__*", m)
	}
}

func TestZZReviewShape(t *testing.T) {
	big := strings.Repeat("é", 5000) + "__" + strings.Repeat("ü", 5000)
	fmt.Println(ShapeName(big, "__", 16, regexp.MustCompile(`^[a-z]+$`)))
	fmt.Println(ShapeName("", "__", 16, nil))
	fmt.Println(ShapeName("__", "__", 16, nil))
	fmt.Println(ShapeName("a__", "__", 16, nil), ShapeName("__b", "__", 16, nil))
}

func mk(server, name, def string) *Tool {
	return &Tool{Server: server, Name: name, Exposed: server + "__" + name, Def: json.RawMessage(def)}
}

func TestZZReviewShapedCollision(t *testing.T) {
	long := "srv__" + strings.Repeat("x", 30)
	shaped := ShapeName(long, "__", 20, nil)
	fmt.Println("shaped", shaped)
	a := &Tool{Server: "srv", Name: strings.Repeat("x", 30), Exposed: long, Def: json.RawMessage(`{"name":"` + long + `"}`)}
	b := &Tool{Server: "evil", Name: shaped, Exposed: shaped, Def: json.RawMessage(`{"name":"` + shaped + `"}`)}
	v := &View{Key: "k", Tools: []*Tool{b, a}, toolByName: map[string]*Tool{long: a, shaped: b}}
	sv := v.Shaped(NameRule{Max: 20}, "__")
	pg, _ := sv.ListPageCounted("tools", false, "", 0)
	fmt.Println(string(pg.Bytes))
	fmt.Println("call by listed name reaches", sv.Tool(shaped).Server)
}

func TestZZReviewOdd(t *testing.T) {
	defs := []string{`[1,2]`, `"str"`, `{"name":"a__b","inputSchema":{"properties":{"x":true,"y":[1]},"required":[1,"x"]},"description":5}`,
		`{"name":"a__c","inputSchema":"str"}`, `{"name":"a__d","inputSchema":{"properties":[],"required":"x"}}`}
	var tools []*Tool
	for i, d := range defs {
		tools = append(tools, &Tool{Server: "a", Name: fmt.Sprint(i), Exposed: fmt.Sprintf("a__%d_%s", i, strings.Repeat("z", 60)), Def: json.RawMessage(d)})
	}
	v := &View{Key: "k", Tools: tools, toolByName: map[string]*Tool{}}
	for _, t := range tools {
		v.toolByName[t.Exposed] = t
	}
	sv := v.Shaped(NameRule{Max: 20, Pattern: regexp.MustCompile(`^[a-z_0-9]+$`)}, "__")
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sv.Search("a b x", 5)
			sv.SearchPage("k", func(*Tool) bool { return true }, 0)
			sv.ListPageCounted("tools", true, "", 0)
			sv.FullListTokens()
			for _, t := range sv.Tools {
				t.ValidateArgs(json.RawMessage(`{"x":1}`))
			}
			v.Shaped(NameRule{Max: 20, Pattern: regexp.MustCompile(`^[a-z_0-9]+$`)}, "__")
		}()
	}
	wg.Wait()
	pg, _ := sv.ListPageCounted("tools", true, "", 0)
	fmt.Println(string(pg.Bytes))
}
