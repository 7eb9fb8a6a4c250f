package gate

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// goToolFindings reports, for a Go module that pins stopgate with the
// tool directive, what makes go tool build some other stopgate than the
// one published at the pinned version: a replace of its module in go.mod
// or go.work, or a vendored copy. The marketplace plugin runs none of
// them (the stop halts), and gate init's install command ignores them;
// the agent can write all three, so each is worth a look.
func goToolFindings(ws workspace) []finding {
	if !goTool(ws.root) {
		return nil
	}
	var fs []finding
	for _, name := range []string{"go.mod", "go.work"} {
		if line := goReplaced(filepath.Join(ws.root, name)); line > 0 {
			fs = append(fs, finding{loc: name + ":" + strconv.Itoa(line), warning: true,
				msg:  "replaces " + goModule + ": the stopgate plugin does not run a replaced stopgate, so with no bin/ every stop halts",
				hint: "remove it (did the agent add it?); to try a stopgate of your own, make install PREFIX=. puts it in bin/, which the hooks run first"})
		}
	}
	if line := goReplaced(filepath.Join(ws.root, "vendor", "modules.txt")); line > 0 {
		fs = append(fs, finding{loc: "vendor/modules.txt:" + strconv.Itoa(line), warning: true,
			msg:  "vendors " + goModule + ": go tool builds the vendored copy, which the stopgate plugin does not run, so with no bin/ every stop halts",
			hint: "install the programs in bin/, which the hooks run first: " + goInstall(`"$PWD"/bin`, goPinned)})
	}
	return fs
}

// goReplaced returns the line of the file at name (go.mod, go.work or
// vendor/modules.txt) that replaces or vendors stopgate's module: a
// replace line, a line of a replace block, or modules.txt's "# MODULE";
// 0 when none does.
func goReplaced(name string) int {
	f, err := os.Open(name)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	block := false
	for n := 1; sc.Scan(); n++ {
		words, _, _ := strings.Cut(sc.Text(), "//")
		w := strings.Fields(words)
		for i := range w {
			w[i] = strings.Trim(w[i], `"`)
		}
		switch {
		case len(w) == 0:
		case block && w[0] == ")":
			block = false
		case w[0] == "replace" && len(w) > 1 && w[1] == "(":
			block = true
		case w[0] == "replace" && len(w) > 1 && w[1] == goModule, block && w[0] == goModule, w[0] == "#" && len(w) > 1 && w[1] == goModule:
			return n
		}
	}
	return 0
}
