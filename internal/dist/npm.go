package dist

import (
	_ "embed"
	"encoding/json"
	"fmt"
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

// platformPackage holds one platform's programs under bin/; npm installs
// the one whose os and cpu match, with no script and no download.
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

// mainPackage is the stopgate package: a node shim per program (npx gate;
// hooks run the native programs) and the platform packages as optional
// dependencies.
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

// shim runs the platform package's program with the call's arguments,
// stdio and exit status.
//
//go:embed shim.js
var shim string
