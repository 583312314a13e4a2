package main

import (
	"encoding/json"
	"slices"
	"testing"
)

// A dumped catalogue keeps each tool's name, description, parameters in their order (a
// description only where there is one) and a true read-only hint, sorted by name, across
// pages; anything else a definition carries is left out.
func TestDumpTools(t *testing.T) {
	pages := []json.RawMessage{
		json.RawMessage(`{"tools":[{"name":"b_x","description":"B","inputSchema":{"type":"object","properties":{"z":{"type":"string","description":"zed"},"a":{"type":"integer"}},"required":["z"]},"annotations":{"readOnlyHint":false,"title":"t"}}],"nextCursor":"c"}`),
		json.RawMessage(`{"tools":[{"name":"a_y","description":"A","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}]}`),
	}
	got, err := dumpTools(pages)
	if err != nil {
		t.Fatal(err)
	}
	want := "[\n{\n\"name\": \"a_y\",\n\"description\": \"A\",\n\"inputSchema\": {\n\"properties\": {}\n},\n\"annotations\": {\n\"readOnlyHint\": true\n}\n},\n" +
		"{\n\"name\": \"b_x\",\n\"description\": \"B\",\n\"inputSchema\": {\n\"properties\": {\n\"z\": {\n\"description\": \"zed\"\n},\n\"a\": {}\n}\n}\n}\n]"
	if string(got) != want {
		t.Fatalf("dumpTools =\n%s\nwant\n%s", got, want)
	}
	if _, err := dumpTools([]json.RawMessage{json.RawMessage(`{"tools":[{"name":"x","inputSchema":{"properties":[1]}}]}`)}); err == nil {
		t.Fatal("properties that are not an object: no error")
	}
}

func TestPickCatalogues(t *testing.T) {
	cats := tokenCatalogues(false)
	got, err := pickCatalogues(cats, []string{catCivic, catCare})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range got {
		names = append(names, c.Name)
	}
	if !slices.Equal(names, []string{catCare, catCivic}) {
		t.Fatalf("picked %v, want care, civic in the catalogues' order", names)
	}
	if all, _ := pickCatalogues(cats, nil); len(all) != len(cats) {
		t.Fatalf("no names kept %d of %d catalogues", len(all), len(cats))
	}
	if got := catalogueNames(" care, civic,"); !slices.Equal(got, []string{"care", "civic"}) {
		t.Fatalf("catalogueNames = %q", got)
	}
	if got := catalogueNames(""); got != nil {
		t.Fatalf("catalogueNames of nothing = %q", got)
	}
	if _, err := pickCatalogues(cats, []string{"nope"}); err == nil {
		t.Fatal("an unknown catalogue: no error")
	}
}
