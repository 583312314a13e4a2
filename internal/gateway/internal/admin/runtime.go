package admin

import (
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// runtimeAPI is the admin API's view of the process (/api/runtime): goroutines and
// memory, a heap profile, and forced collections at most one per gcEvery.
type runtimeAPI struct {
	port Port
	// lastGC is when an admin request last forced a collection (UnixNano).
	lastGC atomic.Int64
}

// ServeRuntime reports the process's goroutines, heap and resident memory; with ?gc=1 it
// first collects garbage and returns freed memory to the OS, so that a soak test (or an
// operator chasing a leak) reads what is really held rather than what the GC has not yet
// collected.
func (a *runtimeAPI) ServeRuntime(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("gc") == "1" {
		if !a.mayCollect(w) {
			return
		}
		debug.FreeOSMemory()
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	JSON(w, http.StatusOK, map[string]any{
		"goroutines":       runtime.NumGoroutine(),
		"heap_inuse_bytes": ms.HeapInuse,
		"heap_alloc_bytes": ms.HeapAlloc,
		"sys_bytes":        ms.Sys,
		"rss_bytes":        residentBytes(),
		"sessions":         a.port.SessionCount(),
	})
}

// ServeHeapProfile writes a heap profile (go tool pprof reads it) after a collection: for
// an operator, or a test, looking for what holds memory.
func (a *runtimeAPI) ServeHeapProfile(w http.ResponseWriter, r *http.Request) {
	if !a.mayCollect(w) {
		return
	}
	runtime.GC()
	w.Header().Set("Content-Type", "application/octet-stream")
	_ = pprof.Lookup("heap").WriteTo(w, 0)
}

// gcEvery is how often an admin request may force a garbage collection: each stops the
// world and walks the heap, so a loop of them is a way to slow every call.
const gcEvery = 2 * time.Second

// mayCollect lets one forced collection through per gcEvery, gateway-wide, and answers the
// others 429 with Retry-After.
func (a *runtimeAPI) mayCollect(w http.ResponseWriter) bool {
	now := time.Now().UnixNano()
	last := a.lastGC.Load()
	if wait := time.Duration(last + int64(gcEvery) - now); last != 0 && wait > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int((wait+time.Second-1)/time.Second)))
		Error(w, http.StatusTooManyRequests, "a garbage collection was forced less than "+gcEvery.String()+" ago; try again later")
		return false
	}
	if !a.lastGC.CompareAndSwap(last, now) {
		Error(w, http.StatusTooManyRequests, "a garbage collection is being forced now; try again later")
		return false
	}
	return true
}

// residentBytes reads the process's resident set size from /proc (0 where there is none).
func residentBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}
