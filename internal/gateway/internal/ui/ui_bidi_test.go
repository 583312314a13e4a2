package ui_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

// TestUIServersShowBidiControls: a right-to-left override (U+202E) in a server's title or
// description once reached the Servers page raw, so the text read in another order than it
// was stored (`evil\u202Etxt.exe` shows as "evilexe.txt"). Such characters are shown
// visibly, as U+XXXX marks, as the integrity page shows them.
func TestUIServersShowBidiControls(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.AdminYAML)
	body := `{"name":"web2","type":"streamable_http","url":"http://127.0.0.1:1/mcp","meta":{"title":"report\u202Etxt.exe","description":"safe\u2066hidden\u2069 text"}}`
	if a := g.API(t, "POST", "/api/servers", body, nil); a.Status != http.StatusCreated {
		t.Fatalf("POST /api/servers: %s", a)
	}
	page := gatewaytest.NewUIClient(t, g).Do("GET", "/ui/servers", "", nil)
	if page.Status != http.StatusOK || !strings.Contains(page.Body, `data-name="web2"`) {
		t.Fatalf("GET /ui/servers: %d %.300s", page.Status, page.Body)
	}
	for _, r := range []string{"\u202E", "\u2066", "\u2069"} {
		if strings.Contains(page.Body, r) {
			t.Errorf("the page holds U+%04X raw", []rune(r)[0])
		}
	}
	for _, mark := range []string{"U&#43;202E", "U&#43;2066", "U&#43;2069"} { // "+" escaped by html/template
		if !strings.Contains(page.Body, `<span class="invis" title="a character that does not show">`+mark+`</span>`) {
			t.Errorf("the page does not show %s", mark)
		}
	}
}
