// Package dist makes stopgate's release (make dist): for each platform the programs built reproducibly from one commit,
// their archive, the npm packages carrying them, and SHA256SUMS. Standard library only, unlike GoReleaser.
package dist

import (
	"archive/tar"
	"bytes"
	"cmp"
	"compress/gzip"
	"crypto/sha256"
	gobuildinfo "debug/buildinfo"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/stopgate/stopgate/internal/buildinfo"
	"github.com/stopgate/stopgate/internal/hook"
)

// Platforms are the released ones; not windows: the hooks are POSIX shell lines, the validators' limits Unix calls.
var Platforms = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64"}

// programs are in every archive; hook.Programs, in the npm package's bin.
var programs = append(slices.Clone(hook.Programs), hook.Exporter)

// Options say what to build.
type Options struct {
	Go        string   // the go command
	Src       string   // a directory of the stopgate repository
	Rev       string   // the commit to build; "" for HEAD
	Out       string   // the output directory, emptied first
	Platforms []string // GOOS/GOARCH
	Log       io.Writer
}

// Build makes the release of one commit in o.Out, from a fresh clone of it: the build is of that commit alone, and Go
// records its version and revision (it cannot in a git worktree).
func Build(o Options) error {
	tmp, err := os.MkdirTemp("", "stopgate-dist-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	src := filepath.Join(tmp, "src")
	rev, err := clone(o, src)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Log, "dist: commit %s\n", rev)
	out := map[string][]byte{}      // file name in o.Out: bytes
	optional := map[string]string{} // the platform packages: version
	var version string
	var mtime time.Time
	for _, p := range o.Platforms {
		goos, arch, ok := strings.Cut(p, "/")
		if !ok {
			return fmt.Errorf("platform %q is not GOOS/GOARCH", p)
		}
		bins, info, err := build(o, src, filepath.Join(tmp, "bin", goos+"_"+arch), goos, arch)
		if err != nil {
			return err
		}
		if info.Revision != rev || info.Modified || info.Release() == "" {
			return fmt.Errorf("the %s build does not record commit %s and its version (recorded: %q, %q)", p, rev, info.Version, info.Revision)
		}
		version, mtime = info.Release(), info.Time
		archive := fmt.Sprintf("stopgate_%s_%s_%s", version, goos, arch)
		out[archive+".tar.gz"] = tarGz(archive, bins, mtime)
		name, pkg := platformPackage(goos, arch, version, bins)
		out["npm/"+npmTarball(name, version)] = tarGz("package", pkg, mtime)
		optional[name] = version
	}
	if len(optional) > 0 {
		out["npm/"+npmTarball("stopgate", version)] = tarGz("package", mainPackage(optional, version), mtime)
	}
	var sums strings.Builder // SHA256SUMS, as sha256sum -c reads it
	for _, name := range slices.Sorted(maps.Keys(out)) {
		h := sha256.Sum256(out[name])
		sums.WriteString(hex.EncodeToString(h[:]) + "  " + name + "\n")
	}
	out["SHA256SUMS"] = []byte(sums.String())
	if err := os.RemoveAll(o.Out); err != nil { // emptied, then written
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(out)) {
		path := filepath.Join(o.Out, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, out[name], 0o644); err != nil {
			return err
		}
		fmt.Fprintf(o.Log, "dist: wrote %s\n", path)
	}
	return nil
}

// clone checks out o.Rev (or HEAD) of o.Src in dir and returns its commit.
func clone(o Options, dir string) (string, error) {
	full, err := git(o.Src, "rev-parse", "--verify", cmp.Or(o.Rev, "HEAD")+"^{commit}")
	if err != nil {
		return "", err
	}
	if dirty, _ := git(o.Src, "status", "--porcelain", "--untracked-files=no"); dirty != "" && o.Rev == "" {
		fmt.Fprintf(o.Log, "dist: note: uncommitted changes are not in the release; it builds commit %s\n", full)
	}
	_, err = git("", "clone", "--quiet", "--no-checkout", o.Src, dir)
	if err == nil {
		_, err = git(dir, "-c", "advice.detachedHead=false", "checkout", "--quiet", full)
	}
	return full, err
}

func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := errors.AsType[*exec.ExitError](err); ok {
			err = fmt.Errorf("%s", strings.TrimSpace(string(ee.Stderr)))
		}
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}

// build builds the programs for p from src into dir, static, without paths, build id or symbols; it returns them and their build info.
func build(o Options, src, dir, goos, arch string) ([]file, buildinfo.Info, error) {
	fmt.Fprintf(o.Log, "dist: building %s/%s\n", goos, arch)
	cmd := exec.Command(o.Go, "build", "-trimpath", "-buildvcs=true", "-tags", "osusergo,netgo",
		"-ldflags", "-s -w -buildid=", "-o", dir+string(filepath.Separator), "./cmd/...")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+arch, "GOFLAGS=", "GOWORK=off")
	cmd.Stdout, cmd.Stderr = o.Log, o.Log
	if err := cmd.Run(); err != nil {
		return nil, buildinfo.Info{}, fmt.Errorf("go build for %s/%s: %w", goos, arch, err)
	}
	var files []file
	var info buildinfo.Info
	for _, name := range programs {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, info, err
		}
		bi, err := gobuildinfo.Read(bytes.NewReader(data))
		if err != nil {
			return nil, info, err
		}
		info = buildinfo.From(bi)
		files = append(files, file{name: name, mode: 0o755, data: data})
	}
	return files, info, nil
}

// file is one member of an archive.
type file struct {
	name string // slash-separated, relative
	mode int64  // 0o755 for programs, 0o644 for the rest
	data []byte
}

// tarGz is a gzipped tar of files in dir whose bytes depend on its arguments alone (members sorted, owner 0:0, one mtime).
func tarGz(dir string, files []file, mtime time.Time) []byte {
	files = slices.Clone(files)
	slices.SortFunc(files, func(a, b file) int { return strings.Compare(a.name, b.name) })
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression) // a valid level
	tw := tar.NewWriter(zw)
	for _, f := range files {
		// Writes to a bytes.Buffer cannot fail, nor a header of these fields.
		tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: dir + "/" + f.name, Mode: f.mode, Size: int64(len(f.data)), ModTime: mtime, Format: tar.FormatUSTAR})
		tw.Write(f.data)
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

// npmTarball is the file name npm pack gives a package.
func npmTarball(name, version string) string {
	return strings.NewReplacer("@", "", "/", "-").Replace(name) + "-" + version + ".tgz"
}

// platformPackage is one platform's package (@stopgate/linux-x64), its programs under bin/: npm installs the one whose
// os and cpu match, with no script and no download.
func platformPackage(goos, arch, version string, programs []file) (string, []file) {
	cpu := strings.ReplaceAll(arch, "amd64", "x64")
	name := "@stopgate/" + goos + "-" + cpu
	files := []file{packageJSON(map[string]any{"name": name, "version": version, "repository": repository, "files": []string{"bin"},
		"description": fmt.Sprintf("stopgate's native programs for %s %s; installed by the stopgate package", goos, cpu),
		"os":          []string{goos}, "cpu": []string{cpu}})}
	for _, f := range programs {
		files = append(files, file{name: "bin/" + f.name, mode: 0o755, data: f.data})
	}
	return name, files
}

// mainPackage is the stopgate package: a node shim per program (npx gate), the platform packages optional dependencies.
func mainPackage(optional map[string]string, version string) []file {
	bin := map[string]string{}
	files := []file{{name: "bin/run.js", mode: 0o644, data: []byte(shim)}}
	for _, name := range hook.Programs {
		bin[name] = "bin/" + name + ".js"
		files = append(files, file{name: "bin/" + name + ".js", mode: 0o755,
			data: []byte("#!/usr/bin/env node\nrequire(\"./run.js\")(\"" + name + "\");\n")})
	}
	return append(files, packageJSON(map[string]any{"name": "stopgate", "version": version, "repository": repository, "files": []string{"bin"},
		"description": "Makes an AI coding agent prove it followed a prompt before it may stop",
		"bin":         bin, "optionalDependencies": optional}))
}

const repository = "github:stopgate/stopgate"

func packageJSON(manifest map[string]any) file {
	data, _ := json.MarshalIndent(manifest, "", "  ") // maps marshal sorted
	return file{name: "package.json", mode: 0o644, data: append(data, '\n')}
}

// shim runs the platform package's program with the call's arguments, stdio and exit status.
//
//go:embed shim.js
var shim string
