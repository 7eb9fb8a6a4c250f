package stop

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/hook"
)

// The confinement of run validators is the trusted base: every path the
// guard protects is read-only in it, with the rest of the base.
func TestConfinementIsTheProtectedSet(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "validators"), 0o755)
	cfg, err := config.Parse([]byte("[settings]\nstate_dir = \"var/state\"\nprotect = [\"docs/policy.md\"]\n\n[[mapping]]\nprompt = \"p\"\nvalidators = [\"v\", \"w\"]\n\n[validators.v]\nrun = \"validators/v.sh\"\n\n[validators.w]\nrun = \"go test ./...\"\n"),
		filepath.Join(root, "mappings.toml"), root)
	if err != nil {
		t.Fatal(err)
	}
	in := &hook.Input{SessionID: "s1", HookEventName: hook.Stop, TranscriptPath: "/home/u/.claude/projects/x/s1.jsonl"}
	base := trustedBase(cfg, in)
	set := base.Guard()
	c := confinement(cfg, base)
	ro, w, _ := base.Confinement()
	if c == nil || !slices.Equal(c.ReadOnly, ro) || !slices.Equal(c.Writable, w) || c.Required {
		t.Fatalf("confinement %+v, want the trusted base's %q, not required", c, ro)
	}
	for _, p := range set.Paths() {
		if !slices.Contains(c.ReadOnly, filepath.FromSlash(p.Path)) {
			t.Errorf("protected %s is not read-only in the confinement", p.Path)
		}
	}
	cfg.Settings.Confine = config.ConfineOff
	if c := confinement(cfg, base); c != nil {
		t.Errorf("confine = false: %+v", c)
	}
	cfg.Settings.Confine, cfg.Settings.Protect = config.ConfineOn, []string{}
	if c := confinement(cfg, trustedBase(cfg, in)); c == nil || !c.Required || len(c.ReadOnly) != 0 {
		t.Errorf("confine = true, protect = []: %+v", c)
	}
}

// What a validator may not create is the protected set in the project but
// the state dir (detect makes it) and outside it (the client's transcripts).
func TestCreatable(t *testing.T) {
	root := t.TempDir()
	cfg, err := config.Parse([]byte("[[mapping]]\nprompt = \"p\"\nvalidators = [\"v\"]\n\n[validators.v]\nrun = \"validators/v.sh\"\n"),
		filepath.Join(root, "mappings.toml"), root)
	if err != nil {
		t.Fatal(err)
	}
	in := &hook.Input{SessionID: "s1", HookEventName: hook.Stop, TranscriptPath: "/home/u/.claude/projects/x/s1.jsonl"}
	got := creatable(cfg, trustedBase(cfg, in).Shared)
	for _, want := range []string{"mappings.toml", ".claude/settings.local.json", "bin/gate", "validators"} {
		if !slices.Contains(got, filepath.Join(root, want)) {
			t.Errorf("%s is not in %v", want, got)
		}
	}
	for _, not := range []string{filepath.Join(root, config.DefaultStateDir), in.TranscriptPath, "/home/u/.claude/projects/x/s1"} {
		if slices.Contains(got, not) {
			t.Errorf("%s is in %v", not, got)
		}
	}
}
