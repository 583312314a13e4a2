package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of utime and stime in /proc/<pid>/stat: USER_HZ, which Linux fixes
// at 100 for what it shows user space whatever the kernel's own tick.
const userHZ = 100

// procCPU is the user+system CPU time process pid has used so far, read from
// /proc/<pid>/stat; ok is false where there is no such file (other systems, or the
// process is gone).
func procCPU(pid int) (time.Duration, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name (field 2) is in parentheses and may hold spaces: fields are
	// counted from the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:])
	// After the name: state is field 3, utime 14 and stime 15 (1-based over the line).
	if len(f) < 13 {
		return 0, false
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(ut+st) * time.Second / userHZ, true
}

// cpuMeter starts measuring the CPU time t's process uses; the function it returns, called
// after the round, gives the time used since. ok is false when t runs in no process of its
// own here.
func (t *target) cpuMeter() func() (time.Duration, bool) {
	if t.proc == nil || t.proc.cmd == nil || t.proc.cmd.Process == nil {
		return func() (time.Duration, bool) { return 0, false }
	}
	pid := t.proc.cmd.Process.Pid
	start, ok := procCPU(pid)
	return func() (time.Duration, bool) {
		end, ok2 := procCPU(pid)
		return end - start, ok && ok2
	}
}

// cpuPerCallOf is a round's CPU time of the target's process per request, in µs (0 when
// not measured).
func cpuPerCallOf(st stats) float64 {
	if !st.CPUMeasured || st.N == 0 {
		return 0
	}
	return float64(st.CPU.Microseconds()) / float64(st.N)
}

// fmtCPU is a summary's CPU time per call for a table cell.
func fmtCPU(s summary) string {
	if s.CPUPerCall <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f µs", s.CPUPerCall)
}

// cpuNote says what one call costs the gateway's process against the ReverseProxy's (and
// the -alt build's), as medians of per-round ratios.
func cpuNote(r *Result, res map[string][]stats, prefix string) {
	g, rp := res[nameMcpgw], res[nameRP]
	vsRP := pairedRatio(g, rp, cpuPerCallOf)
	if vsRP <= 0 {
		r.note("%sprocess CPU time per call was not measured here (no /proc).", prefix)
		return
	}
	line := fmt.Sprintf("%sprocess CPU time (user+system) per call: mcpgw %.1f µs, ReverseProxy %.1f µs (%s)",
		prefix, summarize(g).CPUPerCall, summarize(rp).CPUPerCall, fmtRatio(vsRP))
	if alt := res[nameAlt]; len(alt) > 0 {
		line += fmt.Sprintf("; the -alt build %.1f µs (mcpgw / alt %s)", summarize(alt).CPUPerCall, fmtRatio(pairedRatio(g, alt, cpuPerCallOf)))
	}
	r.note("%s.", line)
}
