package config

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stopgate/stopgate/internal/bench"
)

// Benchmarks of what a hook pays per event for the config, at the sizes of
// `make bench` (docs/benchmarks.md). Names follow benchstat's key=value
// convention: go test -bench . -count 10 ./internal/config | benchstat -.

var benchSizes = []int{10, 1000, 10000}

// benchProject writes a generated project of n mappings and returns its
// config file.
func benchProject(b *testing.B, n int) (root, file string) {
	b.Helper()
	root = b.TempDir()
	file = filepath.Join(root, "mappings.toml")
	if err := os.WriteFile(file, []byte(bench.Mappings(n)), 0o644); err != nil {
		b.Fatal(err)
	}
	return root, file
}

// BenchmarkMatch is matching alone, on a parsed config: the index makes it
// constant per event at any size.
func BenchmarkMatch(b *testing.B) {
	for _, n := range benchSizes {
		root, file := benchProject(b, n)
		cfg, err := loadFile(file, root)
		if err != nil {
			b.Fatal(err)
		}
		hit := "src/prompts/" + bench.Key(n/2) + ".md"
		for _, path := range []struct{ name, rel string }{{"matched", hit}, {"unmatched", "docs/notes.md"}} {
			b.Run(fmt.Sprintf("mappings=%d/read=%s", n, path.name), func(b *testing.B) {
				cfg.MatchPath(path.rel) // build the index outside the loop
				for b.Loop() {
					cfg.MatchPath(path.rel)
				}
			})
		}
	}
}

// BenchmarkMatchCached is what detect does per event: load the config
// from the cache, look the read path up.
func BenchmarkMatchCached(b *testing.B) {
	for _, n := range benchSizes {
		root, file := benchProject(b, n)
		if _, err := Load(file, root); err != nil {
			b.Fatal(err)
		}
		hit := "src/prompts/" + bench.Key(n/2) + ".md"
		for _, path := range []struct{ name, rel string }{{"matched", hit}, {"unmatched", "docs/notes.md"}} {
			b.Run(fmt.Sprintf("mappings=%d/read=%s", n, path.name), func(b *testing.B) {
				for b.Loop() {
					c, err := Load(file, root)
					if err != nil {
						b.Fatal(err)
					}
					maps, err := c.MatchPath(path.rel)
					if err != nil || (len(maps) == 1) != (path.name == "matched") {
						b.Fatalf("MatchPath(%s) = %v, %v", path.rel, maps, err)
					}
				}
			})
		}
	}
}

// BenchmarkLoad is loading a config: cold parses mappings.toml (and writes
// the cache), cached compares the text with the cache's copy and reads
// the cached settings.
func BenchmarkLoad(b *testing.B) {
	for _, n := range benchSizes {
		root, file := benchProject(b, n)
		cache := filepath.Join(root, DefaultStateDir, CacheDir)
		b.Run(fmt.Sprintf("mappings=%d/cache=cold", n), func(b *testing.B) {
			for b.Loop() {
				if err := os.RemoveAll(cache); err != nil {
					b.Fatal(err)
				}
				if _, err := Load(file, root); err != nil {
					b.Fatal(err)
				}
			}
		})
		if _, err := Load(file, root); err != nil { // the cache, for the next
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("mappings=%d/cache=cached", n), func(b *testing.B) {
			for b.Loop() {
				c, err := Load(file, root)
				if err != nil {
					b.Fatal(err)
				}
				if c.cached == nil {
					b.Fatal("parsed: the cache was not used")
				}
			}
		})
	}
}
