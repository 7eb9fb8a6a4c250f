package guard

import (
	"path/filepath"
	"testing"
)

// The guard runs before every Write, Edit and Bash call: these measure its
// decision alone (process start and config loading are in make bench).

func BenchmarkCheckBash(b *testing.B) {
	root, _ := filepath.EvalSymlinks(b.TempDir())
	set := Defaults(Source{Root: root, Home: "/home/u", File: root + "/mappings.toml", StateDir: root + "/tmp/validation",
		Runs: []Run{{Name: "v", Command: "validators/v.sh"}}})
	for _, bc := range []struct{ name, cmd string }{
		{"simple", "go test ./..."},
		{"pipeline", `git diff --stat | grep -v vendor | sort -k2 > output/stat.txt && echo "done: $(date)"`},
		{"denied", "rm -rf tmp"},
		{"heredoc", "cat > output/notes.md <<'EOF'\n# Notes\n\nLine one.\nLine two.\nEOF"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				set.CheckBash(bc.cmd, root)
			}
		})
	}
}

func BenchmarkCheckPath(b *testing.B) {
	root, _ := filepath.EvalSymlinks(b.TempDir())
	set := Defaults(Source{Root: root, File: root + "/mappings.toml", StateDir: root + "/tmp/validation"})
	for b.Loop() {
		set.CheckPath(root+"/src/main.go", root)
	}
}
