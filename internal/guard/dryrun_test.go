package guard

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestDryRunTouchesNothing: judging commands that would write, make FIFOs or
// run in the background leaves the project and the temp dir as they were.
func TestDryRunTouchesNothing(t *testing.T) {
	root, set := project(t, nil)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	before := tree(t, root)
	for _, cmd := range []string{
		"echo x > output/new.txt; mkdir -p build/a; touch build/a/b",
		"diff <(echo a) >(cat > output/p.txt)",
		"eval 'cat <(echo) > output/e.txt'",
		"trap 'echo > output/t.txt' EXIT",
		"echo x > " + tmp + "/sh-interp-1; echo y > \"$TMPDIR/sh-interp-2\"",
		"sleep 100 & echo done > output/bg.txt",
		"cp mappings.toml /tmp/stopgate-guard-copy && rm -rf src",
		"cat > output/s.sh <<'EOF'\necho hi > output/s.txt\nEOF\nbash output/s.sh",
	} {
		set.CheckBash(cmd, root)
	}
	if after := tree(t, root); after != before {
		t.Errorf("the project changed:\nbefore %s\nafter  %s", before, after)
	}
	if es, _ := os.ReadDir(tmp); len(es) > 0 {
		t.Errorf("the temp dir holds %d files", len(es))
	}
	if _, err := os.Stat("/tmp/stopgate-guard-copy"); err == nil {
		t.Errorf("cp ran")
	}
}

func tree(t *testing.T, root string) string {
	var paths []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		paths = append(paths, strings.TrimPrefix(p, root))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(paths)
	return strings.Join(paths, " ")
}
