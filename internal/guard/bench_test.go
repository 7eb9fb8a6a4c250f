package guard

import (
	"os"
	"path/filepath"
	"testing"
)

// The guard runs before every Write, Edit and Bash call: these measure its
// decision alone (process start and config loading are in make bench).

func BenchmarkCheckBash(b *testing.B) {
	root, _ := filepath.EvalSymlinks(b.TempDir())
	set := testSet(Source{Root: root, Home: "/home/u", File: root + "/mappings.toml", StateDir: root + "/tmp/validation",
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
	set := testSet(Source{Root: root, File: root + "/mappings.toml", StateDir: root + "/tmp/validation"})
	for b.Loop() {
		set.CheckPath(root+"/src/main.go", root)
	}
}

// BenchmarkShellReads is arming's analysis of a shell command, which
// detect runs on every PostToolUse of every client's shell tool; the
// same commands' CheckBash above is the guard's before the call.
func BenchmarkShellReads(b *testing.B) {
	root, _ := filepath.EvalSymlinks(b.TempDir())
	os.MkdirAll(root+"/src/prompts", 0o755)
	for _, f := range []string{"joke", "x", "y"} {
		os.WriteFile(root+"/src/prompts/"+f+".md", []byte("# "+f+"\n"), 0o644)
	}
	for _, bc := range []struct{ name, cmd string }{
		{"simple", "go test ./..."},
		{"pipeline", `git diff --stat | grep -v vendor | sort -k2 > output/stat.txt && echo "done: $(date)"`},
		{"sed-read", "sed -n '1,80p' src/prompts/joke.md"},
		{"cd-cat", "cd src/prompts && cat joke.md"},
		{"glob", "cat src/prompts/*"},
		{"find-exec", "find src/prompts -name '*.md' -exec cat {} +"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				ShellReads(bc.cmd, root, root, "/home/u")
			}
		})
	}
}
