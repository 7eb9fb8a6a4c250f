package dist

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// npmScope holds the platform packages: @stopgate/linux-x64 and so on.
const npmScope = "@stopgate"

// npmPlatform is a Go platform as npm's "os" and "cpu" name it.
func npmPlatform(p platform) (os, cpu string) {
	cpu = p.arch
	if cpu == "amd64" {
		cpu = "x64"
	}
	return p.os, cpu
}

// npmPlatformName is the platform package's name, e.g. @stopgate/linux-x64.
func npmPlatformName(p platform) string {
	os, cpu := npmPlatform(p)
	return npmScope + "/" + os + "-" + cpu
}

// npmTarball is the file name npm pack gives a package.
func npmTarball(name, version string) string {
	return strings.NewReplacer("@", "", "/", "-").Replace(name) + "-" + version + ".tgz"
}

// platformPackage holds the native programs under bin/ for one platform;
// npm installs only the one whose os and cpu match (an optional dependency
// of the main package), with no script and no download.
func platformPackage(p platform, version string, programs []file) []file {
	os, cpu := npmPlatform(p)
	manifest := map[string]any{
		"name":        npmPlatformName(p),
		"version":     version,
		"description": fmt.Sprintf("stopgate's native programs for %s %s; installed by the stopgate package", os, cpu),
		"repository":  repository,
		"os":          []string{os},
		"cpu":         []string{cpu},
		"files":       []string{"bin"},
	}
	files := []file{packageJSON(manifest)}
	for _, f := range programs {
		files = append(files, file{name: "package/bin/" + f.name, mode: 0o755, data: f.data})
	}
	return files
}

// mainPackage is the stopgate package: a node shim per program in bin (for a
// person's npx gate …) and the platform packages as optional dependencies.
// Hooks never go through the shim: gate init registers the native programs.
func mainPackage(platforms []platform, version string, programs []string) []file {
	bin := map[string]string{}
	optional := map[string]string{}
	files := []file{{name: "package/bin/run.js", mode: 0o644, data: []byte(shim)}}
	for _, name := range programs {
		bin[name] = "bin/" + name + ".js"
		files = append(files, file{name: "package/bin/" + name + ".js", mode: 0o755,
			data: []byte("#!/usr/bin/env node\nrequire(\"./run.js\")(\"" + name + "\");\n")})
	}
	for _, p := range platforms {
		optional[npmPlatformName(p)] = version
	}
	manifest := map[string]any{
		"name":                 "stopgate",
		"version":              version,
		"description":          "Makes an AI coding agent prove it followed a prompt before it may stop",
		"repository":           repository,
		"bin":                  bin,
		"files":                []string{"bin"},
		"optionalDependencies": optional,
	}
	return append(files, packageJSON(manifest))
}

const repository = "github:stopgate/stopgate"

func packageJSON(manifest map[string]any) file {
	data, _ := json.MarshalIndent(manifest, "", "  ") // maps marshal sorted
	return file{name: "package/package.json", mode: 0o644, data: append(data, '\n')}
}

// shim runs the platform package's native program with the arguments,
// stdio and exit status of the call. It costs node's start-up on every
// call, which is why hooks run the native program directly.
const shim = `"use strict";
// Runs stopgate's native program from the platform package npm installed.
const { spawnSync } = require("child_process");
const path = require("path");

module.exports = function run(name) {
  const cpu = process.arch === "x64" ? "x64" : process.arch;
  const pkg = "@stopgate/" + process.platform + "-" + cpu;
  let dir;
  try {
    dir = path.dirname(require.resolve(pkg + "/package.json"));
  } catch (e) {
    process.stderr.write("stopgate: " + pkg + " is not installed (stopgate has no native programs for this platform, or optional dependencies were left out): run npm install\n");
    process.exit(1);
  }
  const r = spawnSync(path.join(dir, "bin", name), process.argv.slice(2), { stdio: "inherit" });
  if (r.error) {
    process.stderr.write("stopgate: " + r.error.message + "\n");
    process.exit(1);
  }
  if (r.signal) {
    process.kill(process.pid, r.signal);
  }
  process.exit(r.status);
};
`

// WriteNpmInstall lays out in dir what npm install of the stopgate packages
// leaves in a project, with the programs of bin for this platform, so that
// make bench can time a hook through the node shim without npm.
func WriteNpmInstall(dir, bin, goos, goarch string) error {
	p := platform{goos, goarch}
	var progs []file
	for _, name := range programs {
		data, err := os.ReadFile(filepath.Join(bin, name))
		if err != nil {
			return err
		}
		progs = append(progs, file{name: name, mode: 0o755, data: data})
	}
	pkgs := map[string][]file{
		"stopgate":         mainPackage([]platform{p}, "0.0.0", commands),
		npmPlatformName(p): platformPackage(p, "0.0.0", progs),
	}
	for pkg, files := range pkgs {
		for _, f := range files {
			path := filepath.Join(dir, "node_modules", filepath.FromSlash(pkg), filepath.FromSlash(strings.TrimPrefix(f.name, "package/")))
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(path, f.data, os.FileMode(f.mode)); err != nil {
				return err
			}
		}
	}
	return nil
}
