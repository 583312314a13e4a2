package admin

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/sealbox"
	"github.com/mcpgw/mcpgw/internal/store"
)

// BenchmarkSealedListConfig is what sealing costs every merge of the running config
// (a reload, an admin write, a replica's re-apply): ListConfig of 50 API servers with 3
// env and 2 header values each, opened.
func BenchmarkSealedListConfig(b *testing.B) {
	for _, sealed := range []bool{false, true} {
		b.Run(fmt.Sprintf("sealed=%v", sealed), func(b *testing.B) {
			st := SealedStore{Store: store.NewMemory()}
			if sealed {
				r, err := sealbox.ParseKeys(sealbox.NewKeyText())
				if err != nil {
					b.Fatal(err)
				}
				st.Ring = r
			}
			now := time.Now()
			for i := 0; i < 50; i++ {
				doc, _ := json.Marshal(&ServerDoc{Type: "stdio", Command: "/bin/true",
					Env:     map[string]string{"A": "secret-a", "B": "secret-b", "C": "secret-c"},
					Headers: map[string]string{"Authorization": "Bearer x", "X-Key": "y"}})
				if err := st.PutConfig(&store.ConfigEntry{Kind: kindServer, Name: fmt.Sprint("s", i), Doc: doc, Created: now, Updated: now, Version: 1}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if es, err := st.ListConfig(); err != nil || len(es) != 50 {
					b.Fatal(err, len(es))
				}
			}
		})
	}
}
