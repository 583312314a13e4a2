package upstream

import (
	"encoding/json"
	"testing"
)

// Shared upstreams are offered the UI extension with the one MIME type the gateway relays.
func TestDefaultClientCapsOfferUI(t *testing.T) {
	var c struct {
		Extensions map[string]struct {
			MimeTypes []string `json:"mimeTypes"`
		} `json:"extensions"`
		Sampling json.RawMessage `json:"sampling"`
	}
	if err := json.Unmarshal(DefaultClientCaps(), &c); err != nil {
		t.Fatal(err)
	}
	ui, ok := c.Extensions[UIExtension]
	if !ok || len(ui.MimeTypes) != 1 || ui.MimeTypes[0] != UIMimeType || c.Sampling == nil {
		t.Errorf("default client capabilities: %s", DefaultClientCaps())
	}
}
