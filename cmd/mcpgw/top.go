package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcpgw/mcpgw/internal/statedir"
)

// topUsage is the part of GET /api/usage that `mcpgw top` prints (docs/admin-api.md).
type topUsage struct {
	From    time.Time `json:"from"`
	To      time.Time `json:"to"`
	Minutes int       `json:"minutes"`
	Calls   float64   `json:"calls"`
	Errors  float64   `json:"errors"`
	Tokens  topTokens `json:"tokens"`
	Agents  []struct {
		Agent  string    `json:"agent"`
		Calls  float64   `json:"calls"`
		Errors float64   `json:"errors"`
		Tokens topTokens `json:"tokens"`
	} `json:"agents"`
	Tools []struct {
		Server string   `json:"server"`
		Tool   string   `json:"tool"`
		Calls  float64  `json:"calls"`
		Errors float64  `json:"errors"`
		P50    *float64 `json:"p50_seconds"`
		P99    *float64 `json:"p99_seconds"`
	} `json:"tools"`
	AgentTools []struct {
		Agent  string  `json:"agent"`
		Server string  `json:"server"`
		Tool   string  `json:"tool"`
		Calls  float64 `json:"calls"`
		Errors float64 `json:"errors"`
	} `json:"agent_tools"`
}

type topTokens struct {
	Full   float64 `json:"full"`
	Thin   float64 `json:"thin"`
	Search float64 `json:"search"`
	Saved  float64 `json:"saved"`
}

// top prints a running gateway's usage over the last minutes: GET /api/usage with the
// admin key, once, or every --every until interrupted.
func top(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("top", flag.ContinueOnError)
	cfgFlag := fs.String("config", "", "config file (for the gateway's address when --url is not given)")
	base := fs.String("url", "", "the gateway's base URL (default: the config's listen address)")
	key := fs.String("key", "", "admin key or token (default $MCPGW_ADMIN_TOKEN)")
	minutes := fs.Int("minutes", 15, "window: the last N minutes (1-60)")
	every := fs.Duration("every", 0, "print again at this interval until interrupted (0: once)")
	limit := fs.Int("n", 10, "rows per table")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *minutes < 1 || *minutes > 60 {
		return fmt.Errorf("--minutes must be from 1 to 60, not %d", *minutes)
	}
	if *every < 0 || (*every > 0 && *every < time.Second) {
		return fmt.Errorf("--every must be 0 or at least 1s, not %s", *every)
	}
	t, err := resolveTopTarget(*cfgFlag, *base, *key)
	if err != nil {
		return err
	}
	*base, *key = t.base, t.key
	u, err := url.Parse(strings.TrimSuffix(*base, "/") + "/api/usage?minutes=" + strconv.Itoa(*minutes))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--url %q is not an http(s) URL", *base)
	}
	client := &http.Client{Timeout: 10 * time.Second}
	for {
		rep, err := fetchUsage(ctx, client, u.String(), *key, t.authHint)
		if err != nil {
			return err
		}
		if *every > 0 {
			fmt.Fprint(out, "\x1b[H\x1b[2J") // clear the terminal between reports
		}
		if err := printTop(out, rep, *limit); err != nil {
			return err
		}
		if *every == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(*every):
		}
	}
}

// topTarget is the gateway top reads and the credential it sends there.
type topTarget struct {
	base, key string
	// authHint is what a refusal (401, 403) adds: how to send a credential it takes.
	authHint string
}

// resolveTopTarget fills in what --url and --key left out: the config's address, the key
// from $MCPGW_ADMIN_TOKEN, else the local token of the config's state dir. That token is
// the gateway's secret: it goes to the config's own address, or wherever --config says that
// gateway is, and to no other gateway.
func resolveTopTarget(cfgFlag, base, key string) (topTarget, error) {
	t := topTarget{base: base, key: key,
		authHint: " (pass an admin key with --key or $MCPGW_ADMIN_TOKEN; `mcpgw token create-key --admin` makes one)"}
	stateDir := ""
	if base == "" || key == "" {
		path := configPath(cfgFlag)
		cfg, _, err := loadConfig(path)
		if err != nil {
			return t, err
		}
		own := strings.TrimSuffix(gatewayURL(cfg), "/mcp")
		if t.base == "" {
			t.base = own
		}
		if cfgFlag != "" || sameGateway(t.base, own) {
			stateDir = cfg.StateDir
		} else {
			t.authHint = fmt.Sprintf(" (%s is not the gateway of %s, which listens at %s, so that gateway's local token was not sent: pass --key with an admin key of the gateway at %[1]s, or --config with its config file to use its local token)",
				t.base, cmp.Or(path, "the default config"), own)
		}
	}
	if t.key == "" {
		t.key = os.Getenv("MCPGW_ADMIN_TOKEN")
	}
	if t.key == "" && stateDir != "" {
		// The gateway's own user reads its local token: no key to copy.
		t.key, _ = statedir.ReadToken(stateDir)
	}
	return t, nil
}

// sameGateway reports whether the base URLs a and b name one listener: the same port, and
// the same host or two loopback names (127.0.0.1, localhost, ::1).
func sameGateway(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	if err1 != nil || err2 != nil || ua.Port() != ub.Port() || ua.Scheme != ub.Scheme {
		return false
	}
	loopback := func(h string) bool {
		ip := net.ParseIP(h)
		return h == "localhost" || (ip != nil && ip.IsLoopback())
	}
	return strings.EqualFold(ua.Hostname(), ub.Hostname()) || (loopback(ua.Hostname()) && loopback(ub.Hostname()))
}

// fetchUsage reads one report; authHint is added to a refusal (401, 403).
func fetchUsage(ctx context.Context, c *http.Client, u, key, authHint string) (*topUsage, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reading usage: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("reading usage: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(body, &e)
		msg := e.Error
		if msg == "" {
			msg = strings.TrimSpace(string(body))
		}
		hint := ""
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			hint = authHint
		}
		return nil, fmt.Errorf("GET %s: HTTP %d: %s%s", u, resp.StatusCode, msg, hint)
	}
	var rep topUsage
	if err := json.Unmarshal(body, &rep); err != nil {
		return nil, fmt.Errorf("GET %s: not a usage report: %w", u, err)
	}
	if rep.Minutes == 0 {
		return nil, errors.New("GET " + u + ": not a usage report (no window)")
	}
	return &rep, nil
}

func printTop(out io.Writer, r *topUsage, limit int) error {
	fmt.Fprintf(out, "mcpgw usage, last %d min (%s to %s UTC)\n", r.Minutes, r.From.UTC().Format("15:04:05"), r.To.UTC().Format("15:04:05"))
	fmt.Fprintf(out, "calls %s  errors %s  list tokens: full %s  thin %s  search %s  saved %s\n\n",
		count(r.Calls), count(r.Errors), count(r.Tokens.Full), count(r.Tokens.Thin), count(r.Tokens.Search), count(r.Tokens.Saved))
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "AGENT\tCALLS\tERRORS\tFULL TOKENS\tTHIN TOKENS\tSEARCH TOKENS\tSAVED")
	for i, a := range r.Agents {
		if i == limit {
			break
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", orDash(a.Agent), count(a.Calls), count(a.Errors), count(a.Tokens.Full), count(a.Tokens.Thin), count(a.Tokens.Search), count(a.Tokens.Saved))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out)
	tw = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tTOOL\tCALLS\tERRORS\tP50\tP99")
	for i, t := range r.Tools {
		if i == limit {
			break
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", t.Server, t.Tool, count(t.Calls), count(t.Errors), seconds(t.P50), seconds(t.P99))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out)
	tw = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "AGENT\tSERVER\tTOOL\tCALLS\tERRORS")
	for i, t := range r.AgentTools {
		if i == limit {
			break
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", orDash(t.Agent), t.Server, t.Tool, count(t.Calls), count(t.Errors))
	}
	return tw.Flush()
}

func count(f float64) string { return strconv.FormatFloat(f, 'f', 0, 64) }

func seconds(p *float64) string {
	if p == nil {
		return "-"
	}
	return (time.Duration(*p * float64(time.Second))).Round(10 * time.Microsecond).String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
