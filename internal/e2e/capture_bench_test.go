package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stopgate/stopgate/internal/example"
)

// BenchmarkWrapper measures what the capturing Wrapper adds to a hook run, which the
// client's reported hook durations include: the gate answering a Stop with nothing
// pending, run directly and through bin/gate → bin/capture-then-exec.
//
//	go test ./internal/e2e -run '^$' -bench Wrapper
func BenchmarkWrapper(b *testing.B) {
	built := Stopgate(b)
	p := &Project{t: b, Dir: b.TempDir(), Home: b.TempDir(), hooks: map[string][]hookGroup{}}
	if err := example.CopyTree(filepath.Join(Root(b), "mappings.toml"), p.Path("mappings.toml")); err != nil {
		b.Fatal(err)
	}
	p.capture(built, []string{"gate"})
	stop, err := os.ReadFile(filepath.Join(Root(b), capturedDir, "Stop.json"))
	if err != nil {
		b.Fatal(err)
	}
	in := strings.NewReplacer("{{ROOT}}", p.Dir, "{{HOME}}", p.Home).Replace(string(stop))
	for _, bm := range []struct{ name, program string }{
		{"direct", filepath.Join(built, "gate")},
		{"wrapped", p.Path("bin/gate")},
	} {
		b.Run(bm.name, func(b *testing.B) {
			for b.Loop() {
				cmd := exec.Command(bm.program)
				cmd.Dir = p.Dir
				cmd.Env = append(os.Environ(), "CLAUDE_PROJECT_DIR="+p.Dir)
				cmd.Stdin = strings.NewReader(in)
				if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
					b.Fatalf("%s: %v %s", bm.program, err, out)
				}
			}
		})
	}
}
