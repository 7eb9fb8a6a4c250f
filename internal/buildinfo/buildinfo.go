// Package buildinfo is the one reader of the build information Go records
// in a binary (--version, the plugin manifest, the config cache's key).
package buildinfo

import (
	"cmp"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
)

// Info is what a binary knows of its own build.
type Info struct {
	Version  string    // module version, "(devel)" or "" when unknown
	Revision string    // VCS commit, "" when not recorded (a go install from a proxy)
	Modified bool      // built from a work tree with uncommitted changes
	Time     time.Time // the commit's time, zero when not recorded
	Go       string    // toolchain, e.g. go1.26.8
}

// Read returns the running binary's build information.
func Read() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{Go: runtime.Version()}
	}
	return From(bi)
}

// From is the Info of build information from runtime/debug or, in make
// dist, debug/buildinfo (which the hooks do not link: it slows their start).
func From(bi *debug.BuildInfo) Info {
	info := Info{Version: bi.Main.Version, Go: bi.GoVersion}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Revision = s.Value
		case "vcs.modified":
			info.Modified = s.Value == "true"
		case "vcs.time":
			info.Time, _ = time.Parse(time.RFC3339, s.Value)
		}
	}
	return info
}

// Release is the version without its "v", or "" for a development build.
func (i Info) Release() string {
	if i.Version == "" || i.Version == "(devel)" {
		return ""
	}
	return strings.TrimPrefix(i.Version, "v")
}

// String is "v1.2.3 (commit 0123…, go1.26.8 linux/amd64)".
func (i Info) String() string {
	built := i.Go + " " + runtime.GOOS + "/" + runtime.GOARCH
	if i.Revision != "" {
		built = "commit " + i.Revision + map[bool]string{true: " modified"}[i.Modified] + ", " + built
	}
	return cmp.Or(i.Version, "(devel)") + " (" + built + ")"
}
