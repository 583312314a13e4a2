package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"regexp"
	"strings"
)

// The authorization scenarios (auth/*): the scenario server wants a token from its
// authorization server. The driver configures the upstream as an OAuth upstream of the
// gateway (servers.scenario.auth), with one server-wide grant: a machine credential where
// the scenario gives one, else an authorization a person gives. The gateway meets the
// upstream's refusal and names the consent URL where the server's state is shown (its
// start) or in the failed call; the driver, as that person, opens it and follows its
// redirects to the gateway's callback (the scenario's authorization server approves
// without asking), then waits for the server or calls again.

// cimdURL is the client ID metadata document URL the suite expects clients to use.
const cimdURL = "https://conformance-test.local/client-metadata.json"

// authContext is MCP_CONFORMANCE_CONTEXT of the authorization scenarios.
type authContext struct {
	ClientID      string `json:"client_id"`
	ClientSecret  string `json:"client_secret"`
	PrivateKeyPEM string `json:"private_key_pem"`
	// The enterprise identity provider of enterprise-managed authorization, and the user's
	// ID token it issued.
	IDPClientID      string `json:"idp_client_id"`
	IDPIDToken       string `json:"idp_id_token"`
	IDPTokenEndpoint string `json:"idp_token_endpoint"`
}

// authSettings is the servers.scenario.auth section for scenario, and the bearer token
// the driver presents to the gateway as its own ("": none).
func authSettings(scenario string) (string, string, error) {
	var ac authContext
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &ac); err != nil {
			return "", "", fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	if scenario == "auth/enterprise-managed-authorization" {
		// The driver is a user of the enterprise: it calls with its ID token, which the
		// gateway exchanges at the IdP for an identity assertion, and presents that to
		// the upstream's authorization server as the pre-registered client.
		return "    auth:\n      type: oauth\n      per: user\n      grant: token_exchange\n      client_id: " + q(ac.ClientID) +
			"\n      client_secret: " + q(ac.ClientSecret) + "\n      token_exchange:\n        endpoint: " + q(ac.IDPTokenEndpoint) +
			"\n        client_id: " + q(ac.IDPClientID) + "\n        subject_token_type: id_token\n        id_jag: true\n", ac.IDPIDToken, nil
	}
	y, err := serverWideSettings(scenario, ac, q)
	return y, "", err
}

// serverWideSettings is the auth section of the scenarios with one server-wide grant.
func serverWideSettings(scenario string, ac authContext, q func(string) string) (string, error) {
	switch {
	case strings.HasPrefix(scenario, "auth/client-credentials"):
		y := "    auth:\n      type: oauth\n      per: server\n      grant: client_credentials\n      client_id: " + q(ac.ClientID) + "\n"
		if ac.PrivateKeyPEM != "" {
			y += "      private_key: " + q(ac.PrivateKeyPEM) + "\n"
		} else {
			y += "      client_secret: " + q(ac.ClientSecret) + "\n"
		}
		return y, nil
	case ac.ClientID != "":
		return "    auth:\n      type: oauth\n      per: server\n      client_id: " + q(ac.ClientID) + "\n      client_secret: " + q(ac.ClientSecret) + "\n", nil
	default:
		return "    auth:\n      type: oauth\n      per: server\n      client_metadata_url: " + cimdURL + "\n", nil
	}
}

// maxConsents bounds the authorizations the driver gives in one run (a first one, a
// step-up, a new authorization server, and one to spare).
const maxConsents = 4

// consentRE finds the consent URL in what the gateway says, and codeRE the confirmation
// code the gateway's consent page asks for (told only to whoever asked).
var (
	consentRE = regexp.MustCompile(`open (https?://[^\s"']+)`)
	codeRE    = regexp.MustCompile(`the code ([A-Z2-7]{4}-[A-Z2-7]{4})`)
)

// consentCode is the confirmation code in msg, if any.
func consentCode(msg string) string {
	if m := codeRE.FindStringSubmatch(msg); m != nil {
		return m[1]
	}
	return ""
}

// consentURL is the consent URL in msg, if any.
func consentURL(msg string) string {
	if m := consentRE.FindStringSubmatch(msg); m != nil {
		return m[1]
	}
	return ""
}

// giveGrant gives the code to the gateway's consent page as a person would (a browser
// that keeps cookies: the callback completes only in the browser that gave the code) and
// follows every redirect: to the authorization server, and back to the gateway's callback,
// whose answer says whether the grant was made.
func (g *gateway) giveGrant(ctx context.Context, consent, code string) error {
	g.consents++
	if g.consents > maxConsents {
		return fmt.Errorf("mcpgw asked for authorization a %dth time: %s", g.consents, consent)
	}
	logf("authorizing through %s", consent)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, consent, strings.NewReader(url.Values{"code": {code}}.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Timeout: g.http.Timeout * 4, Jar: jar}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("authorization through mcpgw: %w", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/oauth/callback" {
		return fmt.Errorf("authorization through mcpgw ended at %s with HTTP %d: %s", resp.Request.URL.Redacted(), resp.StatusCode, b)
	}
	return nil
}

// waitGranted waits for the scenario server to be up, giving each authorization the
// gateway asks for on the way, as soon as it asks.
func (g *gateway) waitGranted(ctx context.Context) error {
	var grantErr error
	given := map[string]bool{}
	err := g.poll(ctx, "upstream "+upstreamName+" up in /readyz", func() (bool, string) {
		up, seen := g.upstreamUp()
		if !up && strings.Contains(seen, "oauth: ") && consentURL(seen) == "" {
			// The gateway refused the authorization itself (a mismatch, too many
			// step-ups): nothing more will come.
			grantErr = errors.New("mcpgw refused the authorization: " + seen)
			return true, seen
		}
		if u := consentURL(seen); !up && u != "" && !given[u] {
			given[u] = true
			if grantErr = g.giveGrant(ctx, u, consentCode(seen)); grantErr != nil {
				return true, seen
			}
		}
		return up, seen
	})
	if grantErr != nil {
		return grantErr
	}
	return err
}

// authCalls are what every authorization scenario's server wants: its tool listed and
// called. A call the upstream refused for want of authorization (a step-up, a new
// authorization server) is authorized and made again.
func authCalls(ctx context.Context, g *gateway, s *session) error {
	for {
		err := s.call(ctx, "test-tool", map[string]any{}, "test")
		u, code := "", ""
		if err != nil {
			u, code = consentURL(err.Error()), consentCode(err.Error())
		}
		if u == "" {
			return err
		}
		if err := g.giveGrant(ctx, u, code); err != nil {
			return err
		}
		if err := g.waitGranted(ctx); err != nil {
			return err
		}
	}
}
