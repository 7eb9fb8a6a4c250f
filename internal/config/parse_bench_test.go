package config

import (
	"fmt"
	"testing"

	"github.com/stopgate/stopgate/internal/bench"
)

// BenchmarkParse is a cold parse of mappings.toml, what Load pays
// when the cache is stale, and Inspect the same with the checks of `gate
// check` and the gate hook at FileOnly depth.
func BenchmarkParse(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		text := []byte(bench.Mappings(n))
		b.Run(fmt.Sprintf("mappings=%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := Parse(text, "/p/mappings.toml", "/p"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkInspect(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		root, file := benchProject(b, n)
		b.Run(fmt.Sprintf("mappings=%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, ps, err := Inspect(file, root, FileOnly); err != nil || len(ps.Errors()) > 0 {
					b.Fatal(err, ps)
				}
			}
		})
	}
}
