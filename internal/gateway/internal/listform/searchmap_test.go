package listform

import (
	"encoding/json"
	"strings"
	"testing"
)

// The search tool's description ends with the catalogue map it is given, as JSON text (a
// map's characters are escaped by the encoder, never by hand), and names none without one.
func TestSearchToolWithMap(t *testing.T) {
	var def struct {
		Description string `json:"description"`
	}
	if err := json.Unmarshal(SearchToolWith("s", "clinic: patients, allergies; fs: file"), &def); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(def.Description, "\nThe catalogue (server: its groups of tools), whose words make good queries: clinic: patients, allergies; fs: file") {
		t.Errorf("description: %q", def.Description)
	}
	if plain := string(SearchToolWith("s", "")); plain != string(SearchTool("s")) || strings.Contains(plain, "catalogue (server") {
		t.Errorf("a search tool without a map: %s", plain)
	}
}
