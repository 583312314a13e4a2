package sessions
import ("os";"testing";"path/filepath";"fmt"; bolt "go.etcd.io/bbolt")
func TestTruncProbe(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	s, err := OpenBolt(path); if err != nil { t.Fatal(err) }
	for i := 0; i < 2000; i++ { _ = s.Put(record(fmt.Sprint("s", i))) }
	s.Close()
	b, _ := os.ReadFile(path)
	t.Logf("size %d", len(b))
	for _, n := range []int{len(b)/2, 5*4096, 3*4096, 2*4096, 4096+100, 4096, 100} {
		p := filepath.Join(t.TempDir(), "t.db")
		os.WriteFile(p, b[:n], 0o600)
		func() {
			defer func(){ if r := recover(); r != nil { t.Logf("n=%d panic %v", n, r) } }()
			db, err := bolt.Open(p, 0o600, nil)
			t.Logf("raw n=%d err=%v", n, err)
			if err == nil { db.Close() }
		}()
		_, err := OpenBolt(p)
		t.Logf("ours n=%d err=%v", n, err)
	}
}
