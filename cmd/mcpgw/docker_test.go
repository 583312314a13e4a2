package main

// The container image, checked without a Docker engine: examples/docker.yaml loads through
// the real loader with the environment the README's `docker run` sets and passes serve's
// listener check; the Dockerfile builds from files that exist and reach the build context,
// passes VERSION to -X main.version, copies the config where CMD looks for it and provides
// everything the config needs (the stdio upstream on PATH, the state volume, the port);
// and every documented `docker build`/`docker run` line agrees with both.
// test/e2e/docker_test.go starts bin/mcpgw with the same file.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/auth"
)

const (
	repoRoot      = "../.."
	dockerConfig  = "examples/docker.yaml"
	dockerfileRel = "Dockerfile"
)

// docsWithDockerLines are the files whose `docker build`/`docker run` lines users copy.
var docsWithDockerLines = []string{"README.md", "Dockerfile", "examples/docker.yaml", "docs/config.md"}

func readRepoFile(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// ---------------------------------------------------------------------------------------
// Shell words and documented docker commands

// shellWords splits a command line at unquoted white space, keeping each word's quotes and
// $(…) as written (they are only evaluated when a test runs them through bash). An
// unquoted # at the start of a word starts a comment.
func shellWords(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote byte // ' or "
	depth := 0     // $( nesting
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			}
		case quote == '"':
			if c == '"' {
				quote = 0
			} else if c == '\\' && i+1 < len(line) {
				cur.WriteByte(c)
				i++
				c = line[i]
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '$' && i+1 < len(line) && line[i+1] == '(':
			depth++
			cur.WriteByte(c)
			i++
			c = line[i]
		case c == ')' && depth > 0:
			depth--
		case depth == 0 && (c == ' ' || c == '\t'):
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
			continue
		case depth == 0 && c == '#' && !inWord:
			i = len(line) // a comment to the end of the line
			continue
		}
		cur.WriteByte(c)
		inWord = true
	}
	if quote != 0 || depth != 0 {
		return nil, fmt.Errorf("unbalanced quote or $( in %q", line)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// dockerCommands returns every `docker build` and `docker run` command in text, with
// backslash continuations joined. Lines may sit in comments ("# docker run …"), as in
// the Dockerfile and examples/docker.yaml.
func dockerCommands(text string) []string {
	var cmds []string
	lines := strings.Split(text, "\n")
	norm := func(l string) string {
		l = strings.TrimSpace(l)
		l = strings.TrimSpace(strings.TrimPrefix(l, "#"))
		return l
	}
	for i := 0; i < len(lines); i++ {
		l := norm(lines[i])
		if !strings.HasPrefix(l, "docker build ") && !strings.HasPrefix(l, "docker run ") {
			continue
		}
		cmd := l
		for strings.HasSuffix(cmd, "\\") && i+1 < len(lines) {
			i++
			cmd = strings.TrimSuffix(cmd, "\\") + " " + norm(lines[i])
		}
		cmds = append(cmds, cmd)
	}
	return cmds
}

// dockerRun is a parsed `docker run` line.
type dockerRun struct {
	Publish []string          // -p host:container
	Volumes []string          // -v source:target[:opts]
	Env     map[string]string // -e NAME=value (value as written)
	Image   string
	Args    []string // after the image: replaces CMD
}

func parseDockerRun(words []string) (dockerRun, error) {
	r := dockerRun{Env: map[string]string{}}
	withValue := map[string]bool{"-p": true, "--publish": true, "-v": true, "--volume": true, "-e": true,
		"--env": true, "--name": true, "--entrypoint": true, "--user": true, "-u": true, "--network": true}
	i := 2 // after "docker run"
	for ; i < len(words); i++ {
		w := words[i]
		if !strings.HasPrefix(w, "-") {
			break
		}
		name, val, inline := strings.Cut(w, "=")
		if !withValue[name] {
			continue // -d, --rm, -it, …
		}
		if !inline {
			if i+1 >= len(words) {
				return r, fmt.Errorf("%s needs a value", name)
			}
			i++
			val = words[i]
		}
		switch name {
		case "-p", "--publish":
			r.Publish = append(r.Publish, val)
		case "-v", "--volume":
			r.Volumes = append(r.Volumes, val)
		case "-e", "--env":
			k, v, _ := strings.Cut(val, "=")
			r.Env[k] = v
		case "--entrypoint":
			return r, fmt.Errorf("documented lines should use the image's entrypoint, not --entrypoint %s", val)
		}
	}
	if i >= len(words) {
		return r, fmt.Errorf("no image")
	}
	r.Image, r.Args = words[i], words[i+1:]
	return r, nil
}

// dockerBuild is a parsed `docker build` line.
type dockerBuild struct {
	Tag       string
	BuildArgs map[string]string
	Context   string
}

func parseDockerBuild(words []string) (dockerBuild, error) {
	b := dockerBuild{BuildArgs: map[string]string{}}
	var rest []string
	for i := 2; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "-t" || w == "--tag" || w == "--build-arg" || w == "-f" || w == "--file":
			if i+1 >= len(words) {
				return b, fmt.Errorf("%s needs a value", w)
			}
			i++
			switch w {
			case "-t", "--tag":
				b.Tag = words[i]
			case "--build-arg":
				k, v, _ := strings.Cut(words[i], "=")
				b.BuildArgs[k] = v
			default:
				return b, fmt.Errorf("documented lines build the repository's Dockerfile, not -f %s", words[i])
			}
		case strings.HasPrefix(w, "-"):
		default:
			rest = append(rest, w)
		}
	}
	if len(rest) != 1 {
		return b, fmt.Errorf("want exactly one build context, got %q", rest)
	}
	b.Context = rest[0]
	return b, nil
}

// ---------------------------------------------------------------------------------------
// Dockerfile

type dfInstr struct {
	Cmd  string // upper case: FROM, COPY, RUN, …
	Args string
	Line int
}

type dfStage struct {
	Name   string // after AS, else ""
	Base   string
	Instrs []dfInstr
}

// parseDockerfile reads the instructions (continuations joined, comment lines dropped,
// also inside continuations, as Docker does) grouped by stage.
func parseDockerfile(text string) ([]dfStage, error) {
	var stages []dfStage
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		start := i + 1
		for strings.HasSuffix(l, "\\") && i+1 < len(lines) {
			i++
			next := strings.TrimSpace(lines[i])
			if strings.HasPrefix(next, "#") {
				next = ""
			}
			l = strings.TrimSuffix(l, "\\") + " " + next
		}
		cmd, args, _ := strings.Cut(l, " ")
		in := dfInstr{Cmd: strings.ToUpper(cmd), Args: strings.TrimSpace(args), Line: start}
		if in.Cmd == "FROM" {
			f := strings.Fields(in.Args)
			st := dfStage{Base: f[0]}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				st.Name = f[2]
			}
			stages = append(stages, st)
			continue
		}
		if len(stages) == 0 {
			if in.Cmd != "ARG" {
				return nil, fmt.Errorf("line %d: %s before FROM", start, in.Cmd)
			}
			continue // an ARG before the first FROM only feeds FROM lines
		}
		stages[len(stages)-1].Instrs = append(stages[len(stages)-1].Instrs, in)
	}
	if len(stages) == 0 {
		return nil, fmt.Errorf("no FROM")
	}
	return stages, nil
}

func (s dfStage) all(cmd string) []dfInstr {
	var out []dfInstr
	for _, in := range s.Instrs {
		if in.Cmd == cmd {
			out = append(out, in)
		}
	}
	return out
}

// dfCopy is a parsed COPY.
type dfCopy struct {
	From, Chown string
	Srcs        []string
	Dest        string
	Line        int
}

func parseCopy(in dfInstr) (dfCopy, error) {
	c := dfCopy{Line: in.Line}
	words := strings.Fields(in.Args)
	for len(words) > 0 && strings.HasPrefix(words[0], "--") {
		k, v, _ := strings.Cut(words[0], "=")
		switch k {
		case "--from":
			c.From = v
		case "--chown":
			c.Chown = v
		}
		words = words[1:]
	}
	if len(words) > 0 && strings.HasPrefix(words[0], "[") {
		if err := json.Unmarshal([]byte(strings.Join(words, " ")), &words); err != nil {
			return c, fmt.Errorf("line %d: COPY JSON form: %v", in.Line, err)
		}
	}
	if len(words) < 2 {
		return c, fmt.Errorf("line %d: COPY needs a source and a destination", in.Line)
	}
	c.Srcs, c.Dest = words[:len(words)-1], words[len(words)-1]
	return c, nil
}

// destOf is where src lands in the image.
func (c dfCopy) destOf(src string) string {
	if strings.HasSuffix(c.Dest, "/") || len(c.Srcs) > 1 {
		return path.Join(c.Dest, path.Base(src))
	}
	return c.Dest
}

// jsonArgs parses the exec form of CMD/ENTRYPOINT.
func jsonArgs(t *testing.T, in dfInstr) []string {
	t.Helper()
	var a []string
	if err := json.Unmarshal([]byte(in.Args), &a); err != nil {
		t.Fatalf("Dockerfile line %d: %s must use the exec (JSON) form: %v", in.Line, in.Cmd, err)
	}
	return a
}

// envPairs parses ENV KEY=value [KEY=value …].
func envPairs(t *testing.T, in dfInstr) map[string]string {
	t.Helper()
	words, err := shellWords(in.Args)
	if err != nil {
		t.Fatalf("Dockerfile line %d: %v", in.Line, err)
	}
	m := map[string]string{}
	for _, w := range words {
		k, v, ok := strings.Cut(w, "=")
		if !ok {
			t.Fatalf("Dockerfile line %d: ENV %q: use the KEY=value form", in.Line, w)
		}
		m[k] = strings.Trim(v, `"`)
	}
	return m
}

// dockerIgnored reports whether .dockerignore keeps rel out of the build context. It
// knows the pattern forms this repository's .dockerignore uses: names and globs matched
// against the path and every parent directory, and a leading **/ matching at any depth.
func dockerIgnored(patterns []string, rel string) bool {
	rel = path.Clean(rel)
	parts := strings.Split(rel, "/")
	ignored := false
	for _, p := range patterns {
		p = strings.TrimSpace(p)
		if p == "" || strings.HasPrefix(p, "#") {
			continue
		}
		neg := strings.HasPrefix(p, "!")
		p = path.Clean(strings.TrimPrefix(strings.TrimPrefix(p, "!"), "/"))
		match := false
		for i := 1; i <= len(parts) && !match; i++ {
			prefix := strings.Join(parts[:i], "/")
			if rest, ok := strings.CutPrefix(p, "**/"); ok {
				for j := 0; j < i && !match; j++ {
					match, _ = path.Match(rest, strings.Join(parts[j:i], "/"))
				}
			} else {
				match, _ = path.Match(p, prefix)
			}
		}
		if match {
			ignored = !neg
		}
	}
	return ignored
}

func TestDockerIgnoredMatcher(t *testing.T) {
	pats := []string{".git", "bin", "**/*.tmp", "Dockerfile", "test/e2e/node_modules"}
	for rel, want := range map[string]bool{
		"bin/mcpgw": true, "bin": true, "a/b/c.tmp": true, "x.tmp": true, "Dockerfile": true,
		"test/e2e/node_modules/x/y": true, "examples/docker.yaml": false, "go.mod": false,
		"cmd/bin.go": false, "test/e2e/js/x.js": false,
	} {
		if got := dockerIgnored(pats, rel); got != want {
			t.Errorf("dockerIgnored(%q) = %v, want %v", rel, got, want)
		}
	}
}

// ---------------------------------------------------------------------------------------
// The config

// requiredEnv loads the docker config with every variable it names set empty and returns
// the ones the loader reports as unset: the variables without a default.
func requiredEnv(t *testing.T, cfgPath string) []string {
	t.Helper()
	raw, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)`).FindAllStringSubmatch(string(raw), -1) {
		t.Setenv(m[1], "")
	}
	_, ps, _ := config.Load(cfgPath)
	var names []string
	unset := regexp.MustCompile(`environment variable (\w+) is not set`)
	for _, p := range ps {
		if m := unset.FindStringSubmatch(p.Text); m != nil {
			names = append(names, m[1])
		}
	}
	slices.Sort(names)
	return names
}

// documentedRuns returns the parsed `docker run` and `docker build` lines of every doc.
func documentedLines(t *testing.T) (runs map[string][]dockerRun, builds map[string][]dockerBuild) {
	t.Helper()
	runs, builds = map[string][]dockerRun{}, map[string][]dockerBuild{}
	for _, doc := range docsWithDockerLines {
		for _, cmd := range dockerCommands(readRepoFile(t, doc)) {
			words, err := shellWords(cmd)
			if err != nil {
				t.Fatalf("%s: %v", doc, err)
			}
			switch words[1] {
			case "run":
				r, err := parseDockerRun(words)
				if err != nil {
					t.Fatalf("%s: %q: %v", doc, cmd, err)
				}
				runs[doc] = append(runs[doc], r)
			case "build":
				b, err := parseDockerBuild(words)
				if err != nil {
					t.Fatalf("%s: %q: %v", doc, cmd, err)
				}
				builds[doc] = append(builds[doc], b)
			}
		}
	}
	for _, doc := range []string{"README.md", "Dockerfile", "docs/config.md"} {
		if len(runs[doc]) == 0 || len(builds[doc]) == 0 {
			t.Fatalf("%s documents no docker build and docker run lines", doc)
		}
	}
	return runs, builds
}

// TestDockerConfigLoads is (a): examples/docker.yaml through the real loader, with the
// environment the README's docker run sets, and serve's listener check.
func TestDockerConfigLoads(t *testing.T) {
	cfgPath := filepath.Join(repoRoot, dockerConfig)
	required := requiredEnv(t, cfgPath)
	if len(required) == 0 {
		t.Fatalf("%s needs no environment: where does its API key come from?", dockerConfig)
	}
	// Without them the gateway must not start: a forgotten -e is an error, not an open door.
	if _, ps, err := config.Load(cfgPath); err == nil {
		t.Fatalf("%s loads without %v; problems: %v", dockerConfig, required, ps)
	}

	runs, _ := documentedLines(t)
	key := "mcpgw_docker-test-key-0123456789abcdef"
	for doc, rs := range runs {
		for _, r := range rs {
			var names []string
			for k := range r.Env {
				names = append(names, k)
			}
			slices.Sort(names)
			if !slices.Equal(names, required) {
				t.Errorf("%s: docker run sets -e %v; %s needs exactly %v", doc, names, dockerConfig, required)
			}
			// The documented value must be what the gateway compares: the hex SHA-256 of
			// the key's bytes (no trailing newline from echo, no "  -" from sha256sum).
			if v, ok := r.Env["MCPGW_API_KEY_SHA256"]; ok {
				if got := shellEval(t, key, v); got != "" && got != auth.HashAPIKey(key) {
					t.Errorf("%s: -e MCPGW_API_KEY_SHA256=%s gives %q for KEY=%s, want %s", doc, v, got, key, auth.HashAPIKey(key))
				}
			}
		}
	}

	t.Setenv("MCPGW_API_KEY_SHA256", auth.HashAPIKey(key))
	cfg, ps, err := config.Load(cfgPath)
	if err != nil {
		t.Fatalf("%s with the README's environment: %v", dockerConfig, err)
	}
	if len(ps) > 0 {
		t.Errorf("%s with the README's environment has problems: %v", dockerConfig, ps)
	}
	if cfg.Listen != "0.0.0.0:8080" {
		t.Errorf("listen = %q, want 0.0.0.0:8080 (reachable through -p)", cfg.Listen)
	}
	if cfg.Auth.Mode == "none" {
		t.Errorf("auth.mode none on a container's listener")
	}
	if ps := cfg.ListenProblems(); len(ps) > 0 {
		t.Errorf("serve would say about %s: %v", dockerConfig, ps)
	}
	if len(cfg.Auth.APIKeys) != 1 || cfg.Auth.APIKeys[0].SHA256 != auth.HashAPIKey(key) {
		t.Errorf("auth.api_keys = %+v, want the key hash from MCPGW_API_KEY_SHA256", cfg.Auth.APIKeys)
	}
	if cfg.StateDir != "/var/lib/mcpgw" {
		t.Errorf("state_dir = %q, want the image's volume /var/lib/mcpgw", cfg.StateDir)
	}

	// What the Dockerfile's comment warns about: the same file with auth.mode none is
	// refused by serve (and validate) on 0.0.0.0.
	raw := readRepoFile(t, dockerConfig)
	if !strings.Contains(raw, "\n  mode: api_key\n") {
		t.Fatalf("%s: no `  mode: api_key` line to swap", dockerConfig)
	}
	_, nps, err := config.Parse([]byte(strings.Replace(raw, "\n  mode: api_key\n", "\n  mode: none\n", 1)))
	refused := false
	for _, p := range nps {
		refused = refused || !p.Warning && strings.Contains(p.Text, "only runs on a loopback listener; 0.0.0.0:8080 is not one")
	}
	if err == nil || !refused {
		t.Errorf("auth.mode none on 0.0.0.0:8080: got %v (%v), want serve's refusal", nps, err)
	}
}

// shellEval runs `echo VALUE` through bash with KEY set, as the documented line would
// (with KEY set by the line before it). "" when bash or a tool it needs is missing.
func shellEval(t *testing.T, key, value string) string {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Logf("no bash: the documented -e value is not evaluated")
		return ""
	}
	for _, tool := range []string{"sha256sum", "cut"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Logf("no %s: the documented -e value is not evaluated", tool)
			return ""
		}
	}
	out, err := exec.Command(bash, "-c", "KEY="+key+"; printf '%s' "+value).Output()
	if err != nil {
		t.Fatalf("bash: %v", err)
	}
	return string(out)
}

// TestDockerfile is (c): the Dockerfile against the repository, the config and the docs.
func TestDockerfile(t *testing.T) {
	t.Setenv("MCPGW_STATE_DIR", "")
	t.Setenv("MCPGW_API_KEY_SHA256", auth.HashAPIKey("k"))
	cfg, _, err := config.Load(filepath.Join(repoRoot, dockerConfig))
	if err != nil {
		t.Fatal(err)
	}
	stages, err := parseDockerfile(readRepoFile(t, dockerfileRel))
	if err != nil {
		t.Fatal(err)
	}
	final := stages[len(stages)-1]
	byName := map[string]dfStage{}
	for _, s := range stages {
		if s.Name != "" {
			byName[s.Name] = s
		}
	}
	ignore := strings.Split(readRepoFile(t, ".dockerignore"), "\n")

	// Every COPY source: in the repository and in the build context, or made by its stage.
	inImage := map[string]string{} // final image path → what put it there
	var configDest string
	for si, st := range stages {
		isFinal := si == len(stages)-1
		for _, in := range st.all("COPY") {
			c, err := parseCopy(in)
			if err != nil {
				t.Fatal(err)
			}
			for _, src := range c.Srcs {
				if c.From == "" {
					if _, err := os.Stat(filepath.Join(repoRoot, src)); err != nil {
						t.Errorf("Dockerfile line %d: COPY %s: not in the repository", c.Line, src)
					}
					if src != "." && dockerIgnored(ignore, src) {
						t.Errorf("Dockerfile line %d: COPY %s: excluded by .dockerignore", c.Line, src)
					}
					if src == dockerConfig && isFinal {
						configDest = c.destOf(src)
					}
				} else {
					from, ok := byName[c.From]
					if !ok {
						t.Errorf("Dockerfile line %d: COPY --from=%s: no such stage", c.Line, c.From)
						continue
					}
					made := false
					for _, run := range from.all("RUN") {
						made = made || regexp.MustCompile(`(-o|mkdir -p)\s+`+regexp.QuoteMeta(src)+`(\s|$)`).MatchString(run.Args)
					}
					if !made {
						t.Errorf("Dockerfile line %d: COPY --from=%s %s: no RUN in that stage writes it (go build -o / mkdir -p)", c.Line, c.From, src)
					}
				}
				if isFinal {
					inImage[c.destOf(src)] = src
				}
			}
			if isFinal && c.Dest == cfg.StateDir && c.Chown == "" {
				t.Errorf("Dockerfile line %d: the state dir is copied without --chown: uid 65532 cannot write it", c.Line)
			}
		}
	}

	// VERSION reaches -X main.version of every binary built from ./cmd.
	build := byName["build"]
	argLine := 0
	for _, in := range build.all("ARG") {
		if name, _, _ := strings.Cut(in.Args, "="); name == "VERSION" {
			argLine = in.Line
		}
	}
	if argLine == 0 {
		t.Fatalf("Dockerfile: no ARG VERSION in the build stage")
	}
	_ = version // the variable -X main.version sets (a compile error here if it is renamed)
	cmdBuilds, stamped := 0, 0
	for _, run := range build.all("RUN") {
		for _, part := range strings.Split(run.Args, "&&") {
			if !strings.Contains(part, "go build") || !strings.Contains(part, "./cmd/") {
				continue
			}
			cmdBuilds++
			if strings.Contains(part, "-X main.version=${VERSION}") && run.Line > argLine {
				stamped++
			} else {
				t.Errorf("Dockerfile line %d: %q does not set -X main.version=${VERSION} after ARG VERSION", run.Line, strings.TrimSpace(part))
			}
		}
	}
	if cmdBuilds == 0 || stamped != cmdBuilds {
		t.Errorf("Dockerfile: %d of %d ./cmd builds get VERSION", stamped, cmdBuilds)
	}

	// ENTRYPOINT and CMD run serve with the copied config.
	var entry, cmd []string
	env := map[string]string{}
	var volumes, exposed []string
	user := ""
	for _, in := range final.Instrs {
		switch in.Cmd {
		case "ENTRYPOINT":
			entry = jsonArgs(t, in)
		case "CMD":
			cmd = jsonArgs(t, in)
		case "ENV":
			for k, v := range envPairs(t, in) {
				env[k] = v
			}
		case "VOLUME":
			volumes = append(volumes, strings.Fields(in.Args)...)
		case "EXPOSE":
			exposed = append(exposed, strings.Fields(in.Args)...)
		case "USER":
			user = in.Args
		}
	}
	if configDest == "" {
		t.Fatalf("Dockerfile: the final stage does not COPY %s", dockerConfig)
	}
	if len(entry) < 2 || entry[1] != "serve" || inImage[entry[0]] == "" {
		t.Errorf("ENTRYPOINT %q: want a binary the image holds, then serve", entry)
	}
	if i := slices.Index(cmd, "--config"); i < 0 || i+1 >= len(cmd) || cmd[i+1] != configDest {
		t.Errorf("CMD %q: want --config %s (where %s is copied)", cmd, configDest, dockerConfig)
	}
	if v, ok := env["MCPGW_CONFIG"]; ok && v != configDest {
		t.Errorf("ENV MCPGW_CONFIG=%s, but the config is at %s", v, configDest)
	}

	// What the config needs from the image: its stdio commands, the state volume, the port.
	pathDirs := strings.Split(env["PATH"], ":")
	for name, d := range cfg.Servers {
		if d.Transport() != config.TransportStdio {
			continue
		}
		found := inImage[d.Command] != ""
		if !strings.Contains(d.Command, "/") {
			for _, dir := range pathDirs {
				found = found || (dir != "" && inImage[path.Join(dir, d.Command)] != "")
			}
		}
		if !found {
			t.Errorf("servers.%s: command %q is not in the image (ENV PATH=%s; copied: %v)", name, d.Command, env["PATH"], inImage)
		}
	}
	if !slices.Contains(volumes, cfg.StateDir) || inImage[cfg.StateDir] == "" {
		t.Errorf("state_dir %s: want it created (COPY --chown) and a VOLUME; volumes %v", cfg.StateDir, volumes)
	}
	if u, _, _ := strings.Cut(user, ":"); u != "65532" {
		t.Errorf("USER %q: want 65532 (nonroot), the owner of the state dir", user)
	}
	_, port, _ := strings.Cut(cfg.Listen, ":")
	if !slices.Contains(exposed, port) {
		t.Errorf("EXPOSE %v does not include the config's port %s", exposed, port)
	}

	// The documented lines: build with every ARG, run with the port, volume and image.
	argNames := map[string]bool{}
	for _, in := range build.all("ARG") {
		name, _, _ := strings.Cut(in.Args, "=")
		argNames[name] = true
	}
	runs, builds := documentedLines(t)
	tags := map[string]bool{}
	for doc, bs := range builds {
		for _, b := range bs {
			for k := range b.BuildArgs {
				if !argNames[k] {
					t.Errorf("%s: docker build --build-arg %s: the Dockerfile has no ARG %s", doc, k, k)
				}
			}
			for k := range argNames {
				if _, ok := b.BuildArgs[k]; !ok {
					t.Errorf("%s: docker build does not pass --build-arg %s", doc, k)
				}
			}
			if b.Context != "." {
				t.Errorf("%s: docker build context %q, want . (the repository root)", doc, b.Context)
			}
			tags[b.Tag] = true
		}
	}
	for doc, rs := range runs {
		for _, r := range rs {
			if !tags[r.Image] {
				t.Errorf("%s: docker run %s: no documented docker build -t %s", doc, r.Image, r.Image)
			}
			if len(r.Args) > 0 {
				t.Errorf("%s: docker run passes %q after the image: it replaces CMD (--config %s)", doc, r.Args, configDest)
			}
			published := false
			for _, p := range r.Publish {
				parts := strings.Split(p, ":")
				published = published || parts[len(parts)-1] == port
			}
			if !published {
				t.Errorf("%s: docker run -p %v does not publish the container's port %s", doc, r.Publish, port)
			}
			mounted := false
			for _, v := range r.Volumes {
				parts := strings.Split(v, ":")
				mounted = mounted || (len(parts) >= 2 && parts[1] == cfg.StateDir)
			}
			if !mounted {
				t.Errorf("%s: docker run -v %v does not mount the state dir %s", doc, r.Volumes, cfg.StateDir)
			}
		}
	}
}

// TestValidateRefusesOpenListenerWithoutAuth: validate says what serve would refuse.
func TestValidateRefusesOpenListenerWithoutAuth(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		yaml, want string
		ok         bool
	}{
		{"listen: 0.0.0.0:8080\nauth: {mode: none}\n", "error: listen: auth.mode none trusts identity headers, so it only runs on a loopback listener; 0.0.0.0:8080 is not one", false},
		{"listen: 0.0.0.0:8080\nauth: {mode: none, allow_non_loopback: true}\n", "warning: listen: AUTH IS OFF on a non-loopback listener", true},
		{"listen: 127.0.0.1:8080\nauth: {mode: none}\n", "ok (0 servers)", true},
	} {
		p := filepath.Join(dir, "c.yaml")
		if err := os.WriteFile(p, []byte(tc.yaml+"state_dir: "+dir+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		err := validate([]string{"--config", p, "--offline"}, &out)
		if (err == nil) != tc.ok || !strings.Contains(out.String(), tc.want) {
			t.Errorf("validate %q: err %v, output %q; want ok=%v and %q", tc.yaml, err, out.String(), tc.ok, tc.want)
		}
	}
}
