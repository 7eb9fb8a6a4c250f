package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The starter loads, with every setting at its default, and its commented
// examples load too once uncommented.
func TestStarter(t *testing.T) {
	cfg, err := Parse([]byte(Starter), "mappings.toml", ".")
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Settings
	if s.PromptsDir != DefaultPromptsDir || s.StateDir != DefaultStateDir || s.Timeout != DefaultTimeout ||
		s.MaxBlocks != DefaultMaxBlocks || s.OutputLines != DefaultOutputLines || !s.Announce || s.OnFailure != OnFailureBlock {
		t.Errorf("starter settings are not the defaults: %+v", s)
	}
	var uncommented []string
	for _, line := range strings.Split(Starter, "\n") {
		if rest, ok := strings.CutPrefix(line, "# "); ok && (strings.HasPrefix(rest, "[") || strings.Contains(rest, " = ")) {
			line = rest
		}
		uncommented = append(uncommented, line)
	}
	root := t.TempDir()
	file := filepath.Join(root, "mappings.toml")
	if err := os.WriteFile(file, []byte(strings.Join(uncommented, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, ps, err := Inspect(file, root, FileOnly)
	if err != nil || len(ps) != 0 {
		t.Fatalf("uncommented starter: %v %v", ps, err)
	}
	if len(cfg.Mappings) != 2 || len(cfg.Validators) != 2 {
		t.Errorf("uncommented starter has %d mappings and %d validators, want 2 and 2", len(cfg.Mappings), len(cfg.Validators))
	}
}
