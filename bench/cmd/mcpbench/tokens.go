package main

// T1: tokens. What each tools/list form costs an agent in o200k_base tokens, on three
// catalogues of real servers (small: server-everything; medium: + filesystem, memory and
// the demo shop database; large: + a 54-table ERP/CRM/helpdesk schema), each served by
// one bin/mcpgw: the whole list, a scripted 10-task agent loop (no model; tokens_loop.go
// bills it), and for the search form the share of bench/tokens/queries.json whose tool
// ranks in the top 3. Each form is asked for in its own session (X-Mcp-Handshake).

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tiktoken-go/tokenizer/codec"
)

// t1SmokeQueries bounds the search queries per catalogue in a smoke run.
const t1SmokeQueries = 5

func t1(ctx context.Context, e *env, r *Result) error {
	r.Title = "tokens: tool list forms over three catalogues, a scripted 10-task agent loop, search hit rate"
	r.Method = "One bin/mcpgw per catalogue (stdio servers in per_agent mode: one process each, shared by the sessions of the one agent here; the whole list on one page); one session per form, asked for with " +
		"the initialize header `X-Mcp-Handshake: full|thin|search|auto`; the form served is read from the list (search tool → search, describe tool → thin, else full). " +
		"Tokens are o200k_base (tiktoken-go/tokenizer, the vocabulary the gateway embeds), counted on the JSON `result` object of each tools/list page, " +
		"on each call as `{\"name\": …, \"arguments\": …}`, on each tool result's JSON `result`, and on each task's request text. " +
		"The loop (docs/performance.md, \"Tokens (T1)\") runs 10 tasks (a request in plain words, the intended tool, valid arguments) as real calls: " +
		"full and thin take one model turn per task, search two (the search tool with the request, then the tool found); each turn's input is the list plus the whole conversation before it; " +
		"the total is the sum of every turn's input plus the calls and results themselves. Hit rate: each query of bench/tokens/queries.json whose tool the catalogue has, " +
		"asked of the search tool with limit 3 in a search session of that catalogue's gateway."
	enc := codec.NewO200kBase()
	count := func(b []byte) int {
		n, err := enc.Count(string(b))
		if err != nil {
			return len(b) / 4
		}
		return n
	}
	sets := map[string][]tokenQuery{}
	for _, c := range tokenCatalogues(false) {
		if _, ok := sets[c.querySet()]; ok {
			continue
		}
		qs, err := loadQueries(filepath.Join(e.repo, c.querySet()))
		if err != nil {
			return err
		}
		sets[c.querySet()] = qs
	}
	everything := filepath.Join(e.repo, "test/e2e/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	_, scriptErr := os.Stat(everything)
	_, nodeErr := os.Stat(e.nodeBin)
	echo := e.nodeBin == "" || nodeErr != nil || scriptErr != nil
	if echo && !e.smoke {
		return fmt.Errorf("T1 needs node and the npm servers under test/e2e/node_modules (make peers installs both)")
	}
	cats := tokenCatalogues(echo)
	maxQueries := 0
	if e.smoke {
		// The medium catalogue takes a few seconds more (three node servers, a plugin):
		// within a smoke run's budget, and it is where the thin target is taken.
		cats, maxQueries = cats[:2], t1SmokeQueries
		if echo {
			cats = cats[:1]
			r.note("Smoke run without node or the npm servers: the small catalogue is the bench echo server over stdio, and the medium and large catalogues are left out.")
		}
	}
	cats, err := pickCatalogues(cats, e.t1Only)
	if err != nil {
		return err
	}
	r.Params["tokenizer"] = "o200k_base"
	for set, qs := range sets {
		r.Params["queries "+set] = len(qs)
	}
	r.Params["forms"] = tokenForms()
	var outs []*catalogueOutcome
	for _, c := range cats {
		start := time.Now()
		o, err := e.runTokenCatalogue(ctx, c, sets[c.querySet()], maxQueries, count)
		if err != nil {
			return fmt.Errorf("%s catalogue: %w", c.Name, err)
		}
		logf("T1: %s catalogue (%d tools) done in %s", c.Name, o.Tools, time.Since(start).Round(time.Millisecond))
		outs = append(outs, o)
	}
	tokenReport(r, outs)
	if err := e.searchCost(ctx, r); err != nil {
		return err
	}
	if !e.smoke && len(e.t1Only) == 0 { // a set is checked only against all its catalogues
		for set, qs := range sets {
			if stray := unlistedQueries(qs, set, outs); len(stray) > 0 {
				return fmt.Errorf("%s names tools no catalogue lists: %s", set, strings.Join(stray, ", "))
			}
		}
	}
	checks, notes := tokenTargets(outs)
	r.Checks = append(r.Checks, checks...)
	r.Notes = append(r.Notes, notes...)
	return nil
}

// runTokenCatalogue starts the catalogue's gateway, runs every form on it and, when the
// search form is served, the queries whose tool the catalogue has (at most maxQueries, 0:
// all). The gateway is stopped before it returns.
func (e *env) runTokenCatalogue(ctx context.Context, c tokenCatalogue, queries []tokenQuery, maxQueries int, count func([]byte) int) (*catalogueOutcome, error) {
	dir := filepath.Join(e.dir, "t1-"+c.Name)
	root, err := tokenScratch(dir)
	if err != nil {
		return nil, err
	}
	gw, _, err := e.startMcpgw(ctx, "t1-"+c.Name, e.tokenConfig(c, dir, root), 1)
	if err != nil {
		return nil, err
	}
	defer gw.stop()
	tasks := c.Tasks(root)
	if err := waitListed(ctx, gw, tasks, 60*time.Second); err != nil {
		return nil, err
	}
	out := &catalogueOutcome{Name: c.Name, Set: c.querySet(), Forms: map[string]*formOutcome{}}
	for _, f := range tokenForms() {
		fo, listed, err := runTokenForm(ctx, gw, f, tasks, count)
		if err != nil {
			return nil, fmt.Errorf("form %s: %w", f, err)
		}
		out.Forms[f] = fo
		if f == formFull {
			out.Names, out.Tools = listed, len(listed)
		}
	}
	if e.t1Dump != "" {
		if err := e.dumpCatalogue(ctx, gw, c.Name); err != nil {
			return nil, fmt.Errorf("dump: %w", err)
		}
	}
	if out.offered(formSearch) != nil {
		if err := searchHitRate(ctx, gw, out, queries, maxQueries); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// waitListed waits until a full list holds every task's tool: the gateway serves before
// its plugins are up.
func waitListed(ctx context.Context, gw *target, tasks []loopTask, bound time.Duration) error {
	deadline := time.Now().Add(bound)
	var missing []string
	for time.Now().Before(deadline) && ctx.Err() == nil {
		missing = missing[:0]
		t := newTarget(gw.Name, gw.URL, "", 1)
		t.Header = map[string]string{"X-Mcp-Handshake": formFull}
		s, err := t.open(ctx)
		if err != nil {
			return err
		}
		var id int64
		l, err := s.listAll(ctx, &id)
		s.close()
		if err != nil {
			return err
		}
		for _, tk := range tasks {
			if !slices.Contains(l.Names, tk.Tool) {
				missing = append(missing, tk.Tool)
			}
		}
		if len(missing) == 0 {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("tools not listed after %s: %s", bound, strings.Join(missing, ", "))
}

// unlistedQueries are the tools of set's queries that no catalogue asked them lists (a
// query set out of step with the servers).
func unlistedQueries(queries []tokenQuery, set string, outs []*catalogueOutcome) []string {
	var stray []string
	for _, q := range queries {
		if !slices.ContainsFunc(outs, func(c *catalogueOutcome) bool { return c.Set == set && slices.Contains(c.Names, q.Tool) }) {
			stray = append(stray, q.Tool)
		}
	}
	return stray
}

// callJSON is a call as the model writes it.
func callJSON(name string, args json.RawMessage) []byte {
	b, _ := json.Marshal(struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}{name, args})
	return b
}

// runTokenForm opens a session asking for form, counts its list and runs the loop's
// tasks. It returns the outcome and the names listed.
func runTokenForm(ctx context.Context, gw *target, form string, tasks []loopTask, count func([]byte) int) (*formOutcome, []string, error) {
	t := newTarget(gw.Name+" "+form, gw.URL, "", 1)
	t.Header = map[string]string{"X-Mcp-Handshake": form}
	s, err := t.open(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer s.close()
	var id int64
	l, err := s.listAll(ctx, &id)
	if err != nil {
		return nil, nil, err
	}
	fo := &formOutcome{Asked: form, Served: servedForm(l.Names), Tools: len(l.Names), Pages: len(l.Pages)}
	for _, p := range l.Pages {
		fo.ListTokens += count(p)
	}
	if form == formSearch && fo.Served != formSearch {
		fo.Served = notOffered
		return fo, l.Names, nil
	}
	costs := make([]taskCost, 0, len(tasks))
	for _, tk := range tasks {
		tc := taskCost{Query: count([]byte(tk.Query))}
		if fo.Served == formSearch {
			id++
			res, found, err := s.searchTools(ctx, id, tk.Query, 0)
			if err != nil {
				fo.Failed = append(fo.Failed, err.Error())
			}
			q, _ := json.Marshal(map[string]string{"query": tk.Query})
			tc.Search, tc.SearchResult = count(callJSON(searchToolName, q)), count(res)
			if slices.Contains(found, tk.Tool) {
				fo.Found++
			}
		}
		id++
		res, err := s.callTool(ctx, id, tk.Tool, tk.Args)
		if err != nil {
			fo.Failed = append(fo.Failed, err.Error())
		}
		tc.Call, tc.Result = count(callJSON(tk.Tool, tk.Args)), count(res)
		costs = append(costs, tc)
	}
	fo.Loop = loopTokens(fo.ListTokens, costs, fo.Served == formSearch)
	return fo, l.Names, nil
}

// searchHitRate asks the search tool, limit 5, for each query whose tool is in names, and
// counts the intended tool in the top 3 and the top 5, and the empty answers.
func searchHitRate(ctx context.Context, gw *target, out *catalogueOutcome, queries []tokenQuery, maxQueries int) error {
	t := newTarget(gw.Name+" queries", gw.URL, "", 1)
	t.Header = map[string]string{"X-Mcp-Handshake": formSearch}
	s, err := t.open(ctx)
	if err != nil {
		return err
	}
	defer s.close()
	var id int64
	for _, q := range queries {
		if !slices.Contains(out.Names, q.Tool) {
			continue
		}
		if maxQueries > 0 && out.Queries >= maxQueries {
			break
		}
		id++
		_, found, err := s.searchTools(ctx, id, q.Query, 5)
		if err != nil {
			return err
		}
		out.Queries++
		if len(found) == 0 {
			out.Empty++
		}
		if slices.Contains(found, q.Tool) {
			out.Hits5++
		}
		if slices.Contains(found[:min(3, len(found))], q.Tool) {
			out.Hits++
		} else {
			out.Misses = append(out.Misses, fmt.Sprintf("%q → `%s` (got: %s)", q.Query, q.Tool, strings.Join(found, ", ")))
		}
	}
	return nil
}

// tokenReport writes T1's tables: one row per catalogue and form, then the hit rates.
func tokenReport(r *Result, outs []*catalogueOutcome) {
	tb := r.table("lists and the 10-task loop (o200k_base tokens)", "catalogue", "tools", "form asked", "served", "listed", "list tokens", "list / full",
		"loop turns", "loop total", "loop / best single form", "search found the tool", "failed calls")
	for _, c := range outs {
		full := c.offered(formFull)
		best := c.bestSingle()
		for _, f := range tokenForms() {
			fo := c.Forms[f]
			if fo == nil {
				continue
			}
			d := map[string]any{"catalogue": c.Name, "catalogue_tools": c.Tools, "form": f, "served": fo.Served, "tools": fo.Tools, "pages": fo.Pages}
			if fo.Served == notOffered {
				tb.add(d, c.Name, strconv.Itoa(c.Tools), f, notOffered, "–", "–", "–", "–", "–", "–", "–", "–")
				continue
			}
			d["list_tokens"], d["loop_turns"], d["loop_input"], d["loop_carried"], d["loop_total"] = fo.ListTokens, fo.Loop.Turns, fo.Loop.Input, fo.Loop.Carried, fo.Loop.Total
			vsFull, vsBest := "–", "–"
			if full != nil {
				vsFull = pctCell(share(fo.ListTokens, full.ListTokens))
			}
			if best != nil {
				vsBest = fmtRatio(share(fo.Loop.Total, best.Loop.Total))
			}
			found := "–"
			if fo.Served == formSearch {
				found = fmt.Sprintf("%d of %d", fo.Found, fo.Loop.Turns/2)
				d["search_found"] = fo.Found
			}
			d["failed"] = fo.Failed
			tb.add(d, c.Name, strconv.Itoa(c.Tools), f, fo.Served, strconv.Itoa(fo.Tools), strconv.Itoa(fo.ListTokens), vsFull,
				strconv.Itoa(fo.Loop.Turns), strconv.Itoa(fo.Loop.Total), vsBest, found, strconv.Itoa(len(fo.Failed)))
			for i, msg := range fo.Failed {
				if i == 3 {
					break
				}
				r.note("%s catalogue, %s form: call failed: %.300s", c.Name, f, msg)
			}
		}
	}
	ht := r.table("search: intended tool in the top 3 and top 5", "catalogue", "query set", "queries", "top-3 hits", "hit rate", "top-5 hits", "top-5 rate", "empty answers")
	for _, c := range outs {
		if c.offered(formSearch) == nil {
			ht.add(map[string]any{"catalogue": c.Name, "offered": false}, c.Name, c.Set, "–", "–", notOffered, "–", "–", "–")
			continue
		}
		ht.add(map[string]any{"catalogue": c.Name, "set": c.Set, "queries": c.Queries, "hits": c.Hits, "hits5": c.Hits5, "empty": c.Empty, "misses": c.Misses},
			c.Name, c.Set, strconv.Itoa(c.Queries), strconv.Itoa(c.Hits), pctCell(share(c.Hits, c.Queries)),
			strconv.Itoa(c.Hits5), pctCell(share(c.Hits5, c.Queries)), strconv.Itoa(c.Empty))
		if len(c.Misses) > 0 {
			r.Appendix = append(r.Appendix, "Misses on the "+c.Name+" catalogue (query → intended tool, then what the search returned):\n\n- "+strings.Join(c.Misses, "\n- "))
		}
	}
}
