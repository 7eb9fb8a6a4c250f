package trust

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/guard"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/trust/program"
)

// project makes a project with a config, a validator and a home, and
// returns its base.
func project(t *testing.T, toml string) (*Base, string, string) {
	t.Helper()
	root, _ := filepath.EvalSymlinks(t.TempDir())
	home := filepath.Join(root, "home")
	os.MkdirAll(filepath.Join(root, "validators"), 0o755)
	os.MkdirAll(filepath.Join(home, ".claude"), 0o755)
	cfg, err := config.Parse([]byte(toml), filepath.Join(root, "mappings.toml"), root)
	if err != nil {
		t.Fatal(err)
	}
	b, err := For(Project{Root: root, Home: home, File: cfg.File, Config: cfg, PluginRoot: filepath.Join(home, ".claude/plugins/stopgate")})
	if err != nil {
		t.Fatal(err)
	}
	return b, root, home
}

const withRun = "[[mapping]]\nprompt = \"p\"\nvalidators = [\"v\"]\n\n[validators.v]\nrun = \"validators/v.sh\"\n"

// TestEveryWallIsTheBase: the guard protects the whole base and nothing
// else, the wall is its shared part, the confinement holds all of it with
// HOME; a path outside the base is in none of them.
func TestEveryWallIsTheBase(t *testing.T) {
	b, root, home := project(t, withRun)
	all := append(slices.Clone(b.Shared), b.Local...)
	set := b.Guard()
	ro, w, _ := b.Confinement()
	for _, p := range all {
		if set.CheckPath(p.Path, root) == nil {
			t.Errorf("the guard leaves %s of the base open", p.Path)
		}
		if !slices.Contains(ro, filepath.FromSlash(p.Path)) {
			t.Errorf("the confinement leaves %s of the base writable", p.Path)
		}
	}
	wall := b.Wall().Paths()
	for _, p := range b.Shared {
		if !p.Planted && !slices.ContainsFunc(wall, func(w guard.Protected) bool { return w.Path == p.Path }) {
			t.Errorf("the wall leaves %s of the base open", p.Path)
		}
	}
	if len(wall) == 0 || len(b.Local) == 0 {
		t.Fatalf("an empty base: shared %v, local %v", wall, b.Local)
	}
	for _, free := range []string{filepath.Join(root, "src/main.go"), filepath.Join(root, "validators-not/x")} {
		if set.CheckPath(free, root) != nil {
			t.Errorf("the guard protects %s, which is not in the base", free)
		}
	}
	for _, want := range []string{filepath.Join(root, "mappings.toml"), filepath.Join(root, "validators"), filepath.Join(home, ".claude/settings.json"),
		filepath.Join(home, ".claude/plugins/stopgate"), filepath.Join(root, "node_modules/@stopgate"), home} {
		if !slices.Contains(ro, want) {
			t.Errorf("%s is not read-only in the confinement: %q", want, ro)
		}
	}
	if len(w) == 0 || w[0] != root || !slices.Contains(w, filepath.Join(home, ".cache")) {
		t.Errorf("writable %q: want the project and the caches", w)
	}
}

// TestUserSettingsOutsideTheWall: the user's settings are the guard's and
// the confinement's, never the team's wall.
func TestUserSettingsOutsideTheWall(t *testing.T) {
	b, root, home := project(t, withRun)
	user := filepath.Join(home, ".claude/settings.json")
	if b.Guard().CheckPath(user, root) == nil {
		t.Error("the guard leaves the user's settings open")
	}
	if b.Wall().CheckPath(user, root) != nil {
		t.Error("the team's wall names one user's settings")
	}
}

// TestProgramsTheGateRunsAreInTheBase: what the gate execs of its own is
// resolved beside the running program (program.Stopgate), and with
// telemetry on that path is in the base even before it exists.
func TestProgramsTheGateRunsAreInTheBase(t *testing.T) {
	b, root, _ := project(t, "[telemetry]\nenabled = true\n\n"+withRun)
	self, err := program.Self()
	if err != nil {
		t.Fatal(err)
	}
	otel := filepath.Join(filepath.Dir(self), hook.Exporter)
	if b.Guard().CheckPath(otel, root) == nil {
		t.Errorf("gate-otel beside the running program (%s) is outside the base", otel)
	}
	if b.Guard().CheckPath(filepath.Join(root, "bin", hook.Exporter), root) == nil {
		t.Error("bin/gate-otel is outside the base with telemetry on")
	}
}

// TestNothingProtected: protect = [] turns every wall off, HOME included.
func TestNothingProtected(t *testing.T) {
	b, _, _ := project(t, "[settings]\nprotect = []\n\n"+withRun)
	if !b.Empty() || !b.Guard().Empty() || !confinementEmpty(b) {
		t.Errorf("protect = []: %+v", b)
	}
}

// TestGoCachesReadOnly: Go's build and module caches, which the go.mod
// route builds the hooks from, are read-only in the confinement and never
// writable; a confined validator's Go builds get a cache of their own.
func TestGoCachesReadOnly(t *testing.T) {
	b, _, home := project(t, withRun)
	ro, w, env := b.Confinement()
	for _, c := range []string{filepath.Join(home, ".cache/go-build"), filepath.Join(home, "go/pkg/mod")} {
		if os.Getenv("GOCACHE") != "" || os.Getenv("GOMODCACHE") != "" {
			t.Skip("GOCACHE or GOMODCACHE set: the caches are not in this HOME")
		}
		if !slices.Contains(ro, c) || slices.Contains(w, c) {
			t.Errorf("%s: read-only %t, writable %t; want read-only only", c, slices.Contains(ro, c), slices.Contains(w, c))
		}
	}
	if !slices.Equal(env, []string{"GOCACHE=" + filepath.Join(home, ".cache/stopgate/go-build")}) {
		t.Errorf("validator env %q", env)
	}
}

func confinementEmpty(b *Base) bool {
	ro, w, env := b.Confinement()
	return len(ro)+len(w)+len(env) == 0
}
