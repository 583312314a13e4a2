package peers

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Postgres is a PostgreSQL cluster a test started for itself: its own data directory in a
// temp dir, its own Unix socket there, and a loopback TCP port. It is stopped (and its
// directory removed) when the test ends, also when it fails.
type Postgres struct {
	Dir  string // data directory and socket directory's parent
	Port int
	bin  string // the directory of initdb, pg_ctl, psql
	user []string
}

// PostgresBin finds the directory of Debian's PostgreSQL server programs (initdb and
// pg_ctl are not on PATH there): /usr/lib/postgresql/<newest>/bin, else wherever initdb is
// on PATH. It ends the test through Missing when there is none.
func PostgresBin(t testing.TB) string {
	t.Helper()
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "pg_ctl")) {
			return d
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p)
	}
	Missing(t, "PostgreSQL server (initdb, pg_ctl) not in /usr/lib/postgresql/*/bin nor on PATH", Install+" (Debian package postgresql)")
	return ""
}

func version(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode()&0o111 != 0
}

// StartPostgres initialises and starts a cluster with trust authentication for the role
// postgres, listening on 127.0.0.1 only. PostgreSQL refuses to run as root, so under root
// it runs as nobody (runuser) in a directory chowned to nobody.
func StartPostgres(t testing.TB) *Postgres {
	t.Helper()
	bin := PostgresBin(t)
	dir, err := os.MkdirTemp("", "mcpgw-pg-")
	if err != nil {
		t.Fatal(err)
	}
	pg := &Postgres{Dir: dir, bin: bin}
	t.Cleanup(func() {
		pg.stop(t)
		_ = os.RemoveAll(dir)
	})
	if os.Geteuid() == 0 {
		u, err := user.Lookup("nobody")
		if err != nil {
			t.Fatalf("running as root, PostgreSQL needs another user: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		runuser, err := exec.LookPath("runuser")
		if err != nil {
			Missing(t, "runuser (to run PostgreSQL as nobody under root)", "it is part of util-linux")
		}
		pg.user = []string{runuser, "-u", "nobody", "--"}
	}
	if out, err := pg.command(filepath.Join(bin, "initdb"), "-D", pg.data(), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync").CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		pg.Port = freePort(t)
		opts := fmt.Sprintf("-k %s -h 127.0.0.1 -p %d -c fsync=off -c max_connections=50", dir, pg.Port)
		out, err := pg.command(filepath.Join(bin, "pg_ctl"), "-D", pg.data(), "-o", opts, "-l", filepath.Join(dir, "server.log"), "-w", "-t", "30", "start").CombinedOutput()
		if err == nil {
			return pg
		}
		log, _ := os.ReadFile(filepath.Join(dir, "server.log"))
		lastErr = fmt.Errorf("pg_ctl start: %v\n%s\n%s", err, out, log)
		pg.stop(t)
	}
	t.Fatal(lastErr)
	return nil
}

func (pg *Postgres) data() string { return filepath.Join(pg.Dir, "data") }

func (pg *Postgres) command(name string, args ...string) *exec.Cmd {
	argv := append(append(append([]string{}, pg.user...), name), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = pg.Dir
	return cmd
}

// stop stops the server: pg_ctl stop (fast), else the postmaster's pid is killed.
func (pg *Postgres) stop(t testing.TB) {
	pidFile := filepath.Join(pg.data(), "postmaster.pid")
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return // not running
	}
	if out, err := pg.command(filepath.Join(pg.bin, "pg_ctl"), "-D", pg.data(), "-m", "fast", "-w", "-t", "20", "stop").CombinedOutput(); err == nil {
		return
	} else {
		t.Logf("pg_ctl stop: %v\n%s", err, out)
	}
	first, _, _ := strings.Cut(string(b), "\n")
	if pid, err := strconv.Atoi(strings.TrimSpace(first)); err == nil && pid > 0 {
		if p, err := os.FindProcess(pid); err == nil {
			_ = p.Kill()
			_, _ = p.Wait() // reaps nothing (not our child) but waits where it can
		}
		for i := 0; i < 100 && processAlive(pid); i++ {
			time.Sleep(50 * time.Millisecond)
		}
	}
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// DSN is a postgres:// URL for database db as the role postgres over loopback TCP.
func (pg *Postgres) DSN(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", pg.Port, db)
}

// Psql runs SQL through psql against database db (stopping at the first error) and
// returns its unaligned, tuples-only output.
func (pg *Postgres) Psql(t testing.TB, db, sql string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(pg.bin, "psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
		"-h", "127.0.0.1", "-p", strconv.Itoa(pg.Port), "-U", "postgres", "-d", db, "-f", "-")
	cmd.Stdin = strings.NewReader(sql)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("psql: %v\n%s\nSQL:\n%s", err, stderr.String(), sql)
	}
	return strings.TrimSpace(string(out))
}

// CreateDatabase creates an empty database.
func (pg *Postgres) CreateDatabase(t testing.TB, name string) {
	t.Helper()
	pg.Psql(t, "postgres", fmt.Sprintf(`CREATE DATABASE "%s"`, strings.ReplaceAll(name, `"`, `""`)))
}
