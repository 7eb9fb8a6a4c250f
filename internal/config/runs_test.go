package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRuns(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "mappings.toml")
	text := `[[mapping]]
prompt = "a"
validators = ["zeta", "file", "alpha"]

[validators.zeta]
run = "validators/zeta.sh"

[validators.file]
file = "out.txt"

[validators.alpha]
run = "make alpha"
`
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	names := func(vs []*Validator) string {
		var out []string
		for _, v := range vs {
			out = append(out, v.Name+"="+v.Run)
		}
		return strings.Join(out, " ")
	}
	const want = "zeta=validators/zeta.sh alpha=make alpha" // file order, run validators only
	for i := range 2 {                                      // parsed, then from the index cache
		c, err := Load(file, root)
		if err != nil {
			t.Fatal(err)
		}
		if i == 1 && c.cached == nil {
			t.Errorf("load %d: parsed the config; the cache should answer", i)
		}
		vs, err := c.Runs()
		if err != nil || names(vs) != want {
			t.Errorf("load %d: Runs() = %q, %v; want %q", i, names(vs), err, want)
		}
	}
}
