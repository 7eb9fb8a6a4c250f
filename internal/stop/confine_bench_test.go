package stop

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/validator"
)

// BenchmarkDecideConfined is BenchmarkDecide's kind=run, passing, with the
// validators confined (confine=on: each runs in bubblewrap with the
// protected set read-only) beside the same stop unconfined (confine=off):
// the difference is what confinement costs a stop.
func BenchmarkDecideConfined(b *testing.B) {
	for _, n := range []int{1, 16} {
		for _, confine := range []string{config.ConfineOff, config.ConfineOn} {
			b.Run(fmt.Sprintf("validators=%d/confine=%s", n, confine), func(b *testing.B) {
				if confine == config.ConfineOn {
					if _, err := validator.Bwrap(); err != nil {
						b.Skipf("no confinement here: %v", err)
					}
				}
				cfg, entries := decideProject(b, "run", n, true)
				cfg.Settings.Confine = confine
				os.MkdirAll(filepath.Join(cfg.Root, config.DefaultStateDir), 0o755)
				os.WriteFile(cfg.File, nil, 0o644)
				in := &hook.Input{SessionID: "s", HookEventName: hook.Stop}
				for b.Loop() {
					if v := Decide(context.Background(), cfg, in, entries); v.Kind != Pass {
						b.Fatalf("verdict %v: %s", v.Kind, v.Reason)
					}
				}
			})
		}
	}
}
