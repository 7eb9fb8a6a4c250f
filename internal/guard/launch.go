package guard

import (
	"path"
	"strings"
)

// launchers run a program they name among their arguments: npm's and its
// kin's (npx gate, npm exec -- gate, yarn gate, bunx gate), node on the
// npm shim (node_modules/stopgate/bin/gate.js), and go's (go tool gate,
// go run github.com/stopgate/stopgate/cmd/gate@latest).
var launchers = map[string]bool{
	"npx": true, "npm": true, "pnpx": true, "pnpm": true, "yarn": true, "bunx": true, "bun": true,
	"node": true, "nodejs": true, "go": true,
}

// gateCall returns the arguments stopgate's own gate gets from the program
// call ws, and whether ws runs it: gate under any folder (bin/, npm's
// node_modules/.bin and platform package, go install's, the plugin's
// launcher, a folder the dry run cannot know), or the first word named gate
// after a launcher, whatever the launcher's options. The program is known
// by its name, not its folder: every route installs it as gate. Reading a
// launcher's options would miss a spelling (npm's unknown options take the
// next word as their value); a word named gate among them, followed by one
// of the verbs refused, is a call of gate wherever it stands.
func gateCall(ws []word) ([]word, bool) {
	if len(ws) == 0 {
		return nil, false
	}
	if isGate(ws[0].text) {
		return ws[1:], true
	}
	if !launchers[path.Base(ws[0].text)] {
		return nil, false
	}
	for i, w := range ws[1:] {
		if !strings.HasPrefix(w.text, "-") && isGate(w.text) {
			return ws[i+2:], true
		}
	}
	return nil, false
}

// isGate says whether the program text names gate: its last path element,
// less a go version (@latest) and the npm shim's .js.
func isGate(text string) bool {
	name, _, _ := strings.Cut(path.Base(text), "@")
	return strings.TrimSuffix(name, ".js") == "gate"
}

// launchedCode is the shell text npm's launchers run with -c or --call
// (npx -c 'gate clear s1', npm exec --call …), which is judged as a script.
func launchedCode(ws []word) (string, bool) {
	if len(ws) == 0 || !strings.Contains(" npx npm pnpx pnpm ", " "+path.Base(ws[0].text)+" ") {
		return "", false
	}
	for i, w := range ws[1:] {
		if code, ok := strings.CutPrefix(w.text, "--call="); ok {
			return code, true
		}
		if (w.text == "-c" || w.text == "--call") && i+2 < len(ws) {
			return ws[i+2].text, true
		}
	}
	return "", false
}
