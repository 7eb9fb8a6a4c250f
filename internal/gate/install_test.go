package gate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stopgate/stopgate/internal/dist"
)

// TestInstallOf: how gate init finds stopgate installed, and the command
// the launcher's halt names, which is committed with the settings and so
// names no path of this machine.
func TestInstallOf(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n\ntool (\n\tgithub.com/stopgate/stopgate/cmd/detect\n\tgithub.com/stopgate/stopgate/cmd/gate\n)\n"), 0o644)
	want := install{"go tool", `"$CLAUDE_PROJECT_DIR"/bin`, filepath.Join(root, "bin"), `CGO_ENABLED=0 GOBIN="$PWD"/bin go install github.com/stopgate/stopgate/cmd/...@$(go list -m -f '{{.Version}}' github.com/stopgate/stopgate)`}
	if got := installOf(root, "bin", "/home/a/.cache/go-build/ab/gate"); got != want {
		t.Errorf("in a Go module with the tool: %+v; want %+v", got, want)
	}

	for _, tc := range []struct {
		exe, bin string
		want     install
	}{
		{"/p/node_modules/@stopgate/linux-x64/bin/gate", "bin",
			install{"npm", `"$CLAUDE_PROJECT_DIR"/node_modules/@stopgate/*/bin`, "/p/node_modules/@stopgate/linux-x64/bin", "npm install"}},
		{"/usr/lib/node_modules/stopgate/node_modules/@stopgate/darwin-arm64/bin/gate", "bin",
			install{"npm", "'/usr/lib/node_modules/stopgate/node_modules/@stopgate/darwin-arm64/bin'", "/usr/lib/node_modules/stopgate/node_modules/@stopgate/darwin-arm64/bin", "npm install -g stopgate"}},
		{"/p/bin/gate", "bin", install{"bin", `"$CLAUDE_PROJECT_DIR"/bin`, "/p/bin", "make install PREFIX=."}},
		{"/home/a/go/bin/gate", "tools", install{"bin", `"$CLAUDE_PROJECT_DIR"/tools`, "/p/tools", `CGO_ENABLED=0 GOBIN="$PWD"/tools go install github.com/stopgate/stopgate/cmd/...@latest`}},
		// Not a platform package: a bin dir under some other node_modules.
		{"/p/node_modules/other/bin/gate", "bin", install{"bin", `"$CLAUDE_PROJECT_DIR"/bin`, "/p/bin", "make install PREFIX=."}},
	} {
		if got := installOf("/p", tc.bin, tc.exe); got != tc.want {
			t.Errorf("installOf(%q, %q) = %+v; want %+v", tc.exe, tc.bin, got, tc.want)
		}
	}
}

func TestNpmPlatformsReleased(t *testing.T) {
	var want []string
	for _, p := range dist.Platforms {
		goos, arch, _ := strings.Cut(p, "/")
		want = append(want, goos+"-"+strings.Replace(arch, "amd64", "x64", 1))
	}
	if !slices.Equal(npmPlatforms, want) {
		t.Errorf("npmPlatforms = %q; dist.Platforms as npm names them: %q", npmPlatforms, want)
	}
}
