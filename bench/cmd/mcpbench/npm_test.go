package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseInstallStatus(t *testing.T) {
	st, err := parseInstallStatus("exit: 1\ntime: 2026-11-23T23:00:00Z\nreason: npm ci exited with status 1\noutput:\nnpm error code E404\nbench-npm: npm ci exited with status 1\n")
	if err != nil {
		t.Fatal(err)
	}
	if st.Exit != 1 || st.Time != "2026-11-23T23:00:00Z" || st.Reason != "npm ci exited with status 1" ||
		len(st.Output) != 2 || st.Output[0] != "npm error code E404" {
		t.Errorf("parsed %+v", st)
	}
	for name, bad := range map[string]string{
		"empty":          "",
		"no exit":        "time: x\nreason: y\noutput:\n",
		"exit not int":   "exit: one\ntime: x\nreason: y\noutput:\n",
		"no output line": "exit: 0\ntime: x\nreason: y\n",
		"unknown key":    "exit: 0\ntime: x\nreason: y\ncolour: red\noutput:\n",
		"not key: value": "exit 0\ntime: x\nreason: y\noutput:\n",
	} {
		if _, err := parseInstallStatus(bad); err == nil {
			t.Errorf("%s: parsed without an error", name)
		}
	}
}

// writeStatus writes DIR/.install-status as install.sh would.
func writeStatus(t *testing.T, dir, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, installStatusFile), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func installPkg(t *testing.T, dir, pkg string) {
	t.Helper()
	p := filepath.Join(dir, "node_modules", pkg)
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p, "package.json"), []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestNpmUnavailableSaysWhatHappened(t *testing.T) {
	failed := "exit: 1\ntime: 2026-11-23T23:00:00Z\nreason: npm ci exited with status 1\noutput:\n" +
		"npm error code ECONNREFUSED\nnpm error network request to https://registry.example/supergateway failed\nbench-npm: npm ci exited with status 1\n"
	ok := "exit: 0\ntime: 2026-11-23T23:00:00Z\nreason: installed in 12s\noutput:\n"
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string) string // returns the DIR to pass
		want  []string                              // substrings; none means "" (it can run)
		not   []string
	}{
		{"dir missing", func(t *testing.T, dir string) string { return filepath.Join(dir, "nope") },
			[]string{"nope does not exist", "bench/npm/install.sh"}, nil},
		{"dir is a file", func(t *testing.T, dir string) string {
			f := filepath.Join(dir, "file")
			os.WriteFile(f, nil, 0o644)
			return f
		}, []string{"is not a directory"}, nil},
		{"install failed", func(t *testing.T, dir string) string { writeStatus(t, dir, failed); return dir },
			[]string{"failed at 2026-11-23T23:00:00Z with exit status 1: npm ci exited with status 1",
				"its stderr ended: npm error code ECONNREFUSED / npm error network request to https://registry.example/supergateway failed"},
			[]string{"404", "bench-npm: npm ci exited"}},
		{"install failed, an older install still there", func(t *testing.T, dir string) string {
			installPkg(t, dir, "supergateway")
			writeStatus(t, dir, failed)
			return dir
		}, []string{"exit status 1: npm ci exited with status 1"}, nil},
		{"installed but not this package", func(t *testing.T, dir string) string { writeStatus(t, dir, ok); return dir },
			[]string{`supergateway is not installed in`, `although bench/npm/install.sh recorded "installed in 12s" at 2026-11-23T23:00:00Z`}, nil},
		{"never installed", func(t *testing.T, dir string) string { return dir },
			[]string{"supergateway is not installed in", "has recorded no run there"}, nil},
		{"unreadable status", func(t *testing.T, dir string) string { writeStatus(t, dir, "garbage\n"); return dir },
			[]string{"cannot read bench/npm/install.sh's status", "is not key: value"}, nil},
		{"installed", func(t *testing.T, dir string) string {
			installPkg(t, dir, "supergateway")
			writeStatus(t, dir, ok)
			return dir
		}, nil, nil},
		{"installed by a script that kept no status", func(t *testing.T, dir string) string {
			installPkg(t, dir, "supergateway")
			return dir
		}, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := tc.setup(t, t.TempDir())
			got := npmUnavailable(dir, "supergateway")
			if len(tc.want) == 0 && got != "" {
				t.Fatalf("want it to run, got %q", got)
			}
			if len(tc.want) > 0 && got == "" {
				t.Fatalf("want a reason with %q, got none", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("reason %q lacks %q", got, w)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(got, n) {
					t.Errorf("reason %q has %q", got, n)
				}
			}
			if strings.Contains(got, "\n") {
				t.Errorf("reason %q spans lines (results are markdown bullets)", got)
			}
		})
	}
}

func TestFailureQuotesOnlyTheTail(t *testing.T) {
	st := installStatus{Exit: 124, Time: "T", Reason: "npm ci timed out after 600 s",
		Output: []string{"l1", "l2", "l3", "l4", "l5", "l6", "", strings.Repeat("x", 300), "bench-npm: npm ci timed out after 600 s"}}
	got := st.failure()
	if strings.Contains(got, "l1") || strings.Contains(got, "l2") || strings.Contains(got, "l3") || !strings.Contains(got, "l4 / l5 / l6 / xxx") {
		t.Errorf("want the last %d non-empty lines, got %q", maxOutputInReason, got)
	}
	if strings.Contains(got, strings.Repeat("x", 201)) {
		t.Errorf("a long line is not cut: %q", got)
	}
}

// runInstall runs bench/npm/install.sh DIR with PATH set to path.
func runInstall(t *testing.T, dir, path string) (int, string) {
	t.Helper()
	script, err := filepath.Abs("../../npm/install.sh")
	if err != nil {
		t.Fatal(err)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash: install.sh cannot run here")
	}
	cmd := exec.Command(bash, script, dir)
	cmd.Env = append(os.Environ(), "PATH="+path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, stderr.String()
}

// toolsOnly makes a PATH directory with links to the given tools and nothing else.
func toolsOnly(t *testing.T, tools ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range tools {
		p, err := exec.LookPath(name)
		if err != nil {
			t.Skipf("no %s: install.sh cannot run here", name)
		}
		if err := os.Symlink(p, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// What install.sh records reaches the console and the result's markdown: a failing npm
// (a stand-in that answers as an unreachable registry would) and no npm at all.
func TestInstallScriptReasonReachesTheReport(t *testing.T) {
	base := toolsOnly(t, "bash", "cat", "sha256sum", "cut", "dirname", "mkdir", "date", "tail", "mv", "rm", "mktemp", "tee", "cp", "timeout")
	fake := t.TempDir()
	npm := "#!/bin/sh\necho 'npm error code E503' >&2\necho 'npm error 503 Service Unavailable - GET https://registry.example/mcp-hub' >&2\nexit 7\n"
	if err := os.WriteFile(filepath.Join(fake, "npm"), []byte(npm), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		path string
		exit int
		want []string
	}{
		{"npm fails", fake + ":" + base, 7, []string{"exit status 7: npm ci exited with status 7",
			"npm error code E503 / npm error 503 Service Unavailable - GET https://registry.example/mcp-hub"}},
		{"no npm", base, 1, []string{"exit status 1: npm is not on PATH: cannot install the npm baselines"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "bench-npm")
			code, stderr := runInstall(t, dir, tc.path)
			if code != tc.exit {
				t.Fatalf("install.sh exited %d, want %d; stderr:\n%s", code, tc.exit, stderr)
			}
			e := &env{npmDir: dir, nodeBin: "/usr/bin/node-is-not-run-here"}
			why := e.npmSkip("mcp-hub")
			var console bytes.Buffer
			logOut = &console
			defer func() { logOut = os.Stderr }()
			r := &Result{ID: "S1", Params: map[string]any{}}
			skipBaseline(r, "mcp-hub (aggregation gateway from npm)", why)
			md := r.markdown()
			for _, w := range tc.want {
				if !strings.Contains(console.String(), w) {
					t.Errorf("console %q lacks %q", console.String(), w)
				}
				if !strings.Contains(md, "- mcp-hub (aggregation gateway from npm) baseline skipped: ") || !strings.Contains(md, w) {
					t.Errorf("markdown lacks the skip note with %q:\n%s", w, md)
				}
			}
			if strings.Contains(md, "404") {
				t.Errorf("markdown claims a 404 nobody answered:\n%s", md)
			}
		})
	}
}

// @1mcp/agent's note is about the package list, worded as such, in every run.
func TestNotBaselineNoteClaimsNothingAboutThisRun(t *testing.T) {
	r := &Result{ID: "S1", Params: map[string]any{}}
	var console bytes.Buffer
	logOut = &console
	defer func() { logOut = os.Stderr }()
	noteNotBaseline(r, "@1mcp/agent")
	if len(r.Notes) != 1 || !strings.HasPrefix(r.Notes[0], "@1mcp/agent is not a baseline: it is not in bench/npm/package.json") {
		t.Fatalf("notes %q", r.Notes)
	}
	if strings.Contains(r.Notes[0], "answers 404") || strings.Contains(r.Notes[0], "this machine") {
		t.Errorf("note %q speaks of this run's registry", r.Notes[0])
	}
	if !strings.Contains(console.String(), "@1mcp/agent is not a baseline") {
		t.Errorf("console %q", console.String())
	}
	noteNotBaseline(r, "supergateway")
	if len(r.Notes) != 1 {
		t.Errorf("a real baseline got a note: %q", r.Notes)
	}
}
