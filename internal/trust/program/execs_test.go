package program

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// execSites are every place the hook programs and gate-otel start a
// program, by package-relative file and function, with what it runs and
// how the program is found. A new one fails TestExecsDeclared until it is
// named here and resolved through this package: the hooks run nothing the
// trusted base does not name. Each site must also still be there, so the
// table cannot outlive the code it describes.
var execSites = map[string]string{
	"internal/validator/run.go:runCommand":  "the validator's run line, by the system's sh (Shell)",
	"internal/validator/run.go:start":       "the watchdog that kills validators' groups, by the system's sh (Shell)",
	"internal/validator/sandbox.go:Bwrap":   "bwrap's probe (System)",
	"internal/validator/sandbox.go:sandbox": "bwrap (System) with the running gate (Self) as the confined runner",
	"internal/telemetry/telemetry.go:Send":  "gate-otel beside the gate (Stopgate)",
	"internal/cli/cli.go:Main":              "the plugin's hook script, from the plugin's kept copy of go.mod's tool (PluginScript)",
}

// TestExecsDeclared walks the source of every package the four commands
// link (go list -deps) and fails on a program started anywhere execSites
// does not name, on a PATH lookup outside this package (exec.LookPath, or
// exec.Command of a bare name), and on a declared site that is gone.
func TestExecsDeclared(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.Dir}}|{{join .GoFiles \",\"}}{{end}}",
		"github.com/stopgate/stopgate/cmd/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	root, _ := filepath.Abs("../../..")
	seen := map[string]bool{}
	for line := range strings.Lines(string(out)) {
		dir, files, ok := strings.Cut(strings.TrimSpace(line), "|")
		if !ok || !strings.HasPrefix(dir, root+string(filepath.Separator)) || files == "" {
			continue // a module dependency: no exec of its own on these paths
		}
		for _, f := range strings.Split(files, ",") {
			rel, _ := filepath.Rel(root, filepath.Join(dir, f))
			for _, s := range execCalls(t, filepath.Join(dir, f)) {
				site := filepath.ToSlash(rel) + ":" + s.fn
				seen[site] = true
				switch {
				case s.call == "LookPath" && !strings.HasPrefix(filepath.ToSlash(rel), "internal/trust/program/"):
					t.Errorf("%s: exec.LookPath: a program found on the hooks' PATH, which the agent's env.PATH chooses; resolve it with program.System or program.Stopgate", site)
				case s.literal:
					t.Errorf("%s: exec.%s of a bare name: found on the hooks' PATH; resolve it with program.System or program.Stopgate", site, s.call)
				case s.call != "LookPath" && execSites[site] == "":
					t.Errorf("%s: exec.%s starts a program the trusted base does not name: add it to execSites, resolved through this package", site, s.call)
				}
			}
		}
	}
	if len(seen) == 0 {
		t.Fatal("no exec call found: the walk found no source")
	}
	for site := range execSites {
		if !seen[site] {
			t.Errorf("execSites names %s, which starts no program any more", site)
		}
	}
}

// execCall is one call of os/exec's Command, CommandContext or LookPath,
// os.StartProcess or syscall.Exec, in the function fn.
type execCall struct {
	fn, call string
	literal  bool // the program is a string literal: a bare name on PATH
}

// execCalls returns the exec calls in the Go file path.
func execCalls(t *testing.T, path string) []execCall {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	local := map[string]string{} // the file's names for os/exec, os and syscall
	for _, imp := range f.Imports {
		p := strings.Trim(imp.Path.Value, `"`)
		name := filepath.Base(p)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		local[name] = p
	}
	var out []execCall
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			pkg, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			name := local[pkg.Name] + "." + sel.Sel.Name
			if !slices.Contains([]string{"os/exec.Command", "os/exec.CommandContext", "os/exec.LookPath", "os.StartProcess", "syscall.Exec", "syscall.ForkExec"}, name) {
				return true
			}
			prog := 0
			if sel.Sel.Name == "CommandContext" {
				prog = 1
			}
			lit := false
			if len(call.Args) > prog {
				_, lit = call.Args[prog].(*ast.BasicLit)
			}
			out = append(out, execCall{fn: fd.Name.Name, call: sel.Sel.Name, literal: lit})
			return true
		})
	}
	return out
}
