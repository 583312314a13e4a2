package store

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

// countingStore counts Get calls that reach the store behind a cache.
type countingStore struct {
	Store
	gets int
}

func (s *countingStore) Get(id string) (*Record, error) {
	s.gets++
	return s.Store.Get(id)
}

func TestCachedServesFromCache(t *testing.T) {
	back := &countingStore{Store: NewMemory()}
	c := NewCached(back, 10)
	_ = c.Put(record("s1"))
	for i := 0; i < 5; i++ {
		if _, err := c.Get("s1"); err != nil {
			t.Fatal(err)
		}
	}
	if back.gets != 0 {
		t.Fatalf("%d Gets reached the store after a Put; want 0 (Put fills the cache)", back.gets)
	}
	_ = c.Delete("s1")
	if _, err := c.Get("s1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after Delete = %v", err)
	}
	_ = back.Store.Put(record("s2")) // behind the cache's back
	_, _ = c.Get("s2")
	_, _ = c.Get("s2")
	if back.gets != 2 {
		t.Fatalf("gets = %d; want 2 (one miss for the deleted record, one for s2)", back.gets)
	}
}

// Two replicas (caches) over one shared store: a change made by one is seen by the other
// within the cache's TTL.
func TestCachedStaleAtMostTTL(t *testing.T) {
	const ttl = 200 * time.Millisecond
	shared := NewMemory()
	a, b := NewCachedTTL(shared, 10, ttl), NewCachedTTL(shared, 10, ttl)
	r := record("s1")
	_ = a.Put(r)
	if _, err := b.Get("s1"); err != nil {
		t.Fatal(err)
	}
	r.LogLevel = "debug"
	_ = a.Put(r)
	start := time.Now()
	for {
		got, err := b.Get("s1")
		if err != nil {
			t.Fatal(err)
		}
		if got.LogLevel == "debug" {
			break
		}
		if time.Since(start) > 2*time.Second {
			t.Fatal("stale record served past the TTL")
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = a.Delete("s1")
	start = time.Now()
	for {
		_, err := b.Get("s1")
		if errors.Is(err, ErrNotFound) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if time.Since(start) > 2*time.Second {
			t.Fatal("deleted record still served past the TTL")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// failingStore fails every Put.
type failingStore struct{ Store }

func (failingStore) Put(*Record) error { return ErrUnavailable }

func TestCachedPutErrorEvicts(t *testing.T) {
	mem := NewMemory()
	_ = mem.Put(record("s1"))
	c := NewCached(failingStore{mem}, 10)
	if _, err := c.Get("s1"); err != nil {
		t.Fatal(err)
	}
	r := record("s1")
	r.LogLevel = "debug"
	if err := c.Put(r); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Put = %v", err)
	}
	if got, _ := c.Get("s1"); got.LogLevel == "debug" {
		t.Fatal("a failed Put's record was cached")
	}
}

// TestCloneRecordCoversEveryField fills every field of a Record (recursively) and checks
// that cloneRecord copies it all and shares no memory: it fails when a field is added
// without teaching cloneRecord about it.
func TestCloneRecordCoversEveryField(t *testing.T) {
	for _, v := range []any{new(Record), new(Task)} {
		fill(reflect.ValueOf(v).Elem())
		var c any
		switch v := v.(type) {
		case *Record:
			c = cloneRecord(v)
		case *Task:
			c = cloneTask(v)
		}
		if !reflect.DeepEqual(v, c) {
			t.Fatalf("clone differs:\n%+v\n%+v", v, c)
		}
		noAlias(t, reflect.TypeOf(v).Elem().Name(), reflect.ValueOf(v).Elem(), reflect.ValueOf(c).Elem())
	}
}

func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(1)
	case reflect.Uint8:
		v.SetUint('1')
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := 0; i < 2; i++ {
			fill(s.Index(i))
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k)
		fill(e)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem())
		v.Set(p)
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			v.Set(reflect.ValueOf(time.Unix(1, 0).UTC()))
			return
		}
		for i := 0; i < v.NumField(); i++ {
			fill(v.Field(i))
		}
	default:
		panic("fill: unhandled kind " + v.Kind().String())
	}
}

func noAlias(t *testing.T, path string, a, b reflect.Value) {
	t.Helper()
	switch a.Kind() {
	case reflect.Slice:
		if a.Len() > 0 && a.Pointer() == b.Pointer() {
			t.Errorf("%s: clone shares the slice", path)
		}
		for i := 0; i < a.Len(); i++ {
			noAlias(t, path+"[]", a.Index(i), b.Index(i))
		}
	case reflect.Map:
		if a.UnsafePointer() == b.UnsafePointer() {
			t.Errorf("%s: clone shares the map", path)
		}
		for _, k := range a.MapKeys() {
			noAlias(t, path+"[k]", a.MapIndex(k), b.MapIndex(k))
		}
	case reflect.Pointer:
		if a.Pointer() == b.Pointer() {
			t.Errorf("%s: clone shares the pointer", path)
		}
		noAlias(t, path, a.Elem(), b.Elem())
	case reflect.Struct:
		if a.Type() == reflect.TypeOf(time.Time{}) {
			return // immutable
		}
		for i := 0; i < a.NumField(); i++ {
			noAlias(t, path+"."+a.Type().Field(i).Name, a.Field(i), b.Field(i))
		}
	}
}

// TestEvictThroughWrapper: a record another replica ended is evicted from the cache of a
// store wrapped to watch its writes (the gateway's store), not served on from the cache.
func TestEvictThroughWrapper(t *testing.T) {
	mem := NewMemory()
	_ = mem.Put(record("s1"))
	s := WatchWrites(NewCached(mem, 10))
	if _, err := s.Get("s1"); err != nil {
		t.Fatal(err)
	}
	_ = mem.Delete("s1") // another replica ends it in the shared store
	Evict(s, "s1")
	if _, err := s.Get("s1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after Evict = %v, want ErrNotFound (the cached record was served)", err)
	}
}
