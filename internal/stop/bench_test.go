package stop

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/queue"
)

// BenchmarkDecide is the gate's decision on one stop, in-process: plan the
// pending prompts' validators, run them in parallel, judge. kind=file is
// the built-in file check (no process); kind=run starts `true` through
// sh -c, so its cost is the fork and exec of each validator.
// outcome=block fails every check and builds the remediation text.
// go test -bench Decide -count 10 ./internal/gate | benchstat -.
func BenchmarkDecide(b *testing.B) {
	for _, kind := range []string{"file", "run"} {
		for _, n := range []int{1, 16} {
			for _, outcome := range []string{"pass", "block"} {
				b.Run(fmt.Sprintf("kind=%s/validators=%d/outcome=%s", kind, n, outcome), func(b *testing.B) {
					cfg, entries := decideProject(b, kind, n, outcome == "pass")
					in := &hook.Input{SessionID: "s", HookEventName: hook.Stop}
					for b.Loop() {
						v := Decide(context.Background(), cfg, in, entries)
						if (v.Kind == Pass) != (outcome == "pass") {
							b.Fatalf("verdict %v: %s", v.Kind, v.Reason)
						}
					}
				})
			}
		}
	}
}

// decideProject is a project whose n validators are all pending, through
// one mapping each.
func decideProject(b *testing.B, kind string, n int, pass bool) (*config.Config, []queue.Entry) {
	b.Helper()
	root := b.TempDir()
	if err := os.WriteFile(filepath.Join(root, "out.txt"), []byte("ok, done\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	check := `file = "out.txt"` + "\n" + `regex = "^ok"` + "\n" + `not_contains = "TODO"`
	if kind == "run" {
		check = `run = "true"`
	}
	if !pass {
		check = strings.NewReplacer(`"^ok"`, `"^nope"`, `"true"`, `"false"`).Replace(check)
	}
	var text strings.Builder
	var entries []queue.Entry
	for i := range n {
		fmt.Fprintf(&text, "[[mapping]]\nprompt = \"p%d\"\nvalidators = [\"v%d\"]\n\n[validators.v%d]\n%s\nfix = \"Fix it.\"\n\n", i, i, i, check)
		entries = append(entries, queue.Entry{ID: "x", Session: "s", Prompt: fmt.Sprintf("p%d", i), Trigger: queue.TriggerRead})
	}
	cfg, err := config.Parse([]byte(text.String()), filepath.Join(root, "mappings.toml"), root)
	if err != nil {
		b.Fatal(err)
	}
	// Unconfined, as before confinement: BenchmarkDecideConfined has the rest.
	cfg.Settings.Confine = config.ConfineOff
	return cfg, entries
}
