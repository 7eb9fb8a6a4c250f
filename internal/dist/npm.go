package dist

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
)

// npm is p's platform package (@stopgate/linux-x64) and npm's os and cpu.
func (p platform) npm() (name, os, cpu string) {
	cpu = p.arch
	if cpu == "amd64" {
		cpu = "x64"
	}
	return "@stopgate/" + p.os + "-" + cpu, p.os, cpu
}

// npmTarball is the file name npm pack gives a package.
func npmTarball(name, version string) string {
	return strings.NewReplacer("@", "", "/", "-").Replace(name) + "-" + version + ".tgz"
}

// platformPackage holds one platform's programs under bin/; npm installs
// the one whose os and cpu match, with no script and no download.
func platformPackage(p platform, version string, programs []file) []file {
	name, os, cpu := p.npm()
	files := []file{packageJSON(map[string]any{"name": name, "version": version, "repository": repository, "files": []string{"bin"},
		"description": fmt.Sprintf("stopgate's native programs for %s %s; installed by the stopgate package", os, cpu),
		"os":          []string{os}, "cpu": []string{cpu}})}
	for _, f := range programs {
		files = append(files, file{name: "bin/" + f.name, mode: 0o755, data: f.data})
	}
	return files
}

// mainPackage is the stopgate package: a node shim per program (npx gate;
// hooks run the native programs) and the platform packages as optional
// dependencies.
func mainPackage(platforms []platform, version string) []file {
	bin := map[string]string{}
	optional := map[string]string{}
	files := []file{{name: "bin/run.js", mode: 0o644, data: []byte(shim)}}
	for _, name := range commands {
		bin[name] = "bin/" + name + ".js"
		files = append(files, file{name: "bin/" + name + ".js", mode: 0o755,
			data: []byte("#!/usr/bin/env node\nrequire(\"./run.js\")(\"" + name + "\");\n")})
	}
	for _, p := range platforms {
		name, _, _ := p.npm()
		optional[name] = version
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

// shim runs the platform package's program with the call's arguments,
// stdio and exit status.
//
//go:embed shim.js
var shim string
