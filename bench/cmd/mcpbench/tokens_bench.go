package main

// T1's cost of the search itself: the toolsearch Go benchmarks (one query on the 502-tool
// catalogue, one index build), on one core, against the per-query budget.

import (
	"context"
	"fmt"
	"strings"
)

// searchQueryBudgetNs is the search form's budget per query at 500 tools on one core.
const searchQueryBudgetNs = 2e6

// searchCost runs BenchmarkSearch500 and BenchmarkIndex (a smoke run:
// the first alone) with -cpu 1 and reports them, with the query's ratio to the budget as a
// check.
func (e *env) searchCost(ctx context.Context, r *Result) error {
	pattern := "^(BenchmarkSearch500|BenchmarkIndex)$"
	if e.smoke {
		pattern = "^BenchmarkSearch500$"
	}
	out, err := e.goTest(ctx, "./internal/registry/internal/toolsearch", pattern, "-cpu", "1")
	if err != nil {
		return err
	}
	tb := r.table("search cost (go test -bench -cpu 1, internal/registry/internal/toolsearch)", "benchmark", "ns/op", "B/op", "allocs/op", "vs the 2 ms budget")
	for _, b := range parseBench(out) {
		name := strings.TrimSuffix(b.Name, "-1")
		ratio := "–"
		if name == "BenchmarkSearch500" {
			x := b.Metrics["ns/op"] / searchQueryBudgetNs
			ratio = fmtRatio(x)
			r.Checks = append(r.Checks, Check{What: "search: one query at 502 tools, one core", Want: "≤ 2 ms",
				Got: fmt.Sprintf("%.3f ms (%s of the budget)", b.Metrics["ns/op"]/1e6, ratio), Pass: x <= 1})
		}
		tb.add(map[string]any{"benchmark": name, "metrics": b.Metrics}, name, fmt.Sprintf("%.0f", b.Metrics["ns/op"]),
			fmt.Sprintf("%.0f", b.Metrics["B/op"]), fmt.Sprintf("%.0f", b.Metrics["allocs/op"]), ratio)
	}
	return nil
}
