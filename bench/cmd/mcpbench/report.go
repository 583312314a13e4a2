package main

// Results: one markdown table and one JSON file per scenario, with the machine they ran on.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Machine describes where a run happened; the numbers mean little without it.
type Machine struct {
	NProc        int       `json:"nproc"`
	CPUModel     string    `json:"cpu_model"`
	MemTotal     string    `json:"mem_total"`
	Kernel       string    `json:"kernel"`
	GoVersion    string    `json:"go_version"`
	GOMAXPROCS   int       `json:"gomaxprocs"`
	LoadAvgStart string    `json:"loadavg_start"`
	LoadAvgEnd   string    `json:"loadavg_end,omitempty"`
	McpgwVersion string    `json:"mcpgw_version"`
	GitRevision  string    `json:"git_revision"`
	Time         time.Time `json:"time"`
}

func describeMachine(repo, mcpgwBin string) Machine {
	m := Machine{NProc: runtime.NumCPU(), GoVersion: runtime.Version(), GOMAXPROCS: runtime.GOMAXPROCS(0), Time: time.Now().UTC()}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "MemTotal:"); ok {
				m.MemTotal = strings.TrimSpace(v)
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	m.LoadAvgStart = loadAvg()
	if out, err := exec.Command(mcpgwBin, "version").Output(); err == nil {
		m.McpgwVersion = strings.TrimSpace(string(out))
	}
	if out, err := exec.Command("git", "-C", repo, "describe", "--always", "--dirty").Output(); err == nil {
		m.GitRevision = strings.TrimSpace(string(out))
	}
	return m
}

func loadAvg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return ""
}

// Check is one target of the issue and whether it held.
type Check struct {
	What string `json:"what"`
	Want string `json:"want"`
	Got  string `json:"got"`
	Pass bool   `json:"pass"`
}

// Table is a markdown table with the raw numbers behind it.
type Table struct {
	Title   string           `json:"title,omitempty"`
	Columns []string         `json:"columns"`
	Rows    [][]string       `json:"rows"`
	Data    []map[string]any `json:"data,omitempty"`
}

// Result is one scenario's outcome.
type Result struct {
	ID       string         `json:"id"`
	Title    string         `json:"title"`
	Method   string         `json:"method"`
	Params   map[string]any `json:"params"`
	Tables   []*Table       `json:"tables"`
	Checks   []Check        `json:"checks"`
	Notes    []string       `json:"notes,omitempty"`
	Appendix []string       `json:"appendix,omitempty"`
	Error    string         `json:"error,omitempty"`
	Duration string         `json:"duration"`
	Machine  Machine        `json:"machine"`
	Smoke    bool           `json:"smoke"`
}

func (r *Result) table(title string, cols ...string) *Table {
	t := &Table{Title: title, Columns: cols}
	r.Tables = append(r.Tables, t)
	return t
}

func (t *Table) add(data map[string]any, cells ...string) {
	t.Rows = append(t.Rows, cells)
	t.Data = append(t.Data, data)
}

func (r *Result) check(what, want, got string, pass bool) {
	r.Checks = append(r.Checks, Check{What: what, Want: want, Got: got, Pass: pass})
}

func (r *Result) note(format string, a ...any) { r.Notes = append(r.Notes, fmt.Sprintf(format, a...)) }

func (t *Table) markdown(b *strings.Builder) {
	if t.Title != "" {
		fmt.Fprintf(b, "**%s**\n\n", t.Title)
	}
	b.WriteString("| " + strings.Join(t.Columns, " | ") + " |\n")
	b.WriteString("|" + strings.Repeat("---|", len(t.Columns)) + "\n")
	for _, row := range t.Rows {
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}
	b.WriteString("\n")
}

func checksMarkdown(b *strings.Builder, checks []Check, withID map[int]string) {
	if len(checks) == 0 {
		return
	}
	if withID != nil {
		b.WriteString("| scenario | target | wanted | measured | holds |\n|---|---|---|---|---|\n")
	} else {
		b.WriteString("| target | wanted | measured | holds |\n|---|---|---|---|\n")
	}
	for i, c := range checks {
		ok := "**no**"
		if c.Pass {
			ok = "yes"
		}
		if withID != nil {
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", withID[i], c.What, c.Want, c.Got, ok)
		} else {
			fmt.Fprintf(b, "| %s | %s | %s | %s |\n", c.What, c.Want, c.Got, ok)
		}
	}
	b.WriteString("\n")
}

func (r *Result) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s — %s\n\n", r.ID, r.Title)
	if r.Smoke {
		b.WriteString("_Smoke run: rounds too short for the numbers to mean anything._\n\n")
	}
	if r.Method != "" {
		b.WriteString(r.Method + "\n\n")
	}
	if r.Error != "" {
		fmt.Fprintf(&b, "**Error:** %s\n\n", r.Error)
	}
	for _, t := range r.Tables {
		t.markdown(&b)
	}
	checksMarkdown(&b, r.Checks, nil)
	for _, n := range r.Notes {
		b.WriteString("- " + n + "\n")
	}
	if len(r.Notes) > 0 {
		b.WriteString("\n")
	}
	for _, a := range r.Appendix {
		b.WriteString(a + "\n\n")
	}
	m := r.Machine
	fmt.Fprintf(&b, "Machine: %d × %s, %s RAM, Linux %s, %s, GOMAXPROCS=%d, load %s → %s; %s (git %s); %s; took %s.\n",
		m.NProc, m.CPUModel, m.MemTotal, m.Kernel, m.GoVersion, m.GOMAXPROCS, m.LoadAvgStart, m.LoadAvgEnd,
		m.McpgwVersion, m.GitRevision, m.Time.Format(time.RFC3339), r.Duration)
	return b.String()
}

// write saves <date>-<id>.md and .json in dir.
func (r *Result) write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	stem := filepath.Join(dir, r.Machine.Time.Local().Format("2006-01-02")+"-"+r.ID)
	if err := os.WriteFile(stem+".md", []byte(r.markdown()), 0o644); err != nil {
		return err
	}
	j, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(stem+".json", append(j, '\n'), 0o644)
}

func writeSummary(dir string, results []*Result) (string, error) {
	var b strings.Builder
	var checks []Check
	ids := map[int]string{}
	for _, r := range results {
		for _, c := range r.Checks {
			ids[len(checks)] = r.ID
			checks = append(checks, c)
		}
	}
	b.WriteString("# mcpbench summary\n\n")
	if len(results) > 0 {
		m := results[0].Machine
		fmt.Fprintf(&b, "%d × %s, %s, GOMAXPROCS=%d, %s (git %s), %s.\n\n", m.NProc, m.CPUModel, m.GoVersion, m.GOMAXPROCS,
			m.McpgwVersion, m.GitRevision, m.Time.Format(time.RFC3339))
	}
	checksMarkdown(&b, checks, ids)
	for _, r := range results {
		b.WriteString(r.markdown())
		b.WriteString("\n")
	}
	if len(results) == 0 {
		return b.String(), nil
	}
	path := filepath.Join(dir, results[0].Machine.Time.Local().Format("2006-01-02")+"-summary.md")
	return b.String(), os.WriteFile(path, []byte(b.String()), 0o644)
}

// Formatting.

func fmtDur(d time.Duration) string {
	us := float64(d) / 1e3
	switch {
	case d == 0:
		return "–"
	case us < 10000:
		return strconv.FormatFloat(us, 'f', 0, 64) + " µs"
	default:
		return strconv.FormatFloat(us/1000, 'f', 1, 64) + " ms"
	}
}

func fmtRate(r float64) string {
	if r >= 100 {
		return strconv.FormatFloat(r, 'f', 0, 64)
	}
	return strconv.FormatFloat(r, 'f', 1, 64)
}

func fmtRatio(x float64) string {
	if x == 0 {
		return "–"
	}
	return strconv.FormatFloat(x, 'f', 2, 64) + "×"
}

func fmtBytes(b float64) string {
	switch {
	case b >= 1<<20:
		return strconv.FormatFloat(b/(1<<20), 'f', 1, 64) + " MiB"
	case b >= 1<<10:
		return strconv.FormatFloat(b/(1<<10), 'f', 1, 64) + " KiB"
	default:
		return strconv.FormatFloat(b, 'f', 0, 64) + " B"
	}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func us(d time.Duration) float64 { return float64(d) / 1e3 }
