package guard

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestShellReads: the files a command reads, resolved by the dry run as
// the shell resolves them, in a real project tree.
func TestShellReads(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"src/prompts/joke.md", "src/prompts/x.md", "docs/x.md", "a.md", "notes.txt"} {
		p := filepath.Join(root, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("text\n"), 0o644)
	}
	os.WriteFile(filepath.Join(root, "list.txt"), []byte("src/prompts/joke.md\n"), 0o644)
	r := func(ps ...string) []string {
		out := []string{}
		for _, p := range ps {
			if filepath.IsAbs(p) {
				out = append(out, p)
			} else {
				out = append(out, filepath.Join(root, p))
			}
		}
		return out
	}
	joke, x := "src/prompts/joke.md", "src/prompts/x.md"
	tests := []struct {
		cmd  string
		want []string
	}{
		// The cases of issue 17, none of which a walk over the words resolves.
		{"cd src/prompts && cat joke.md", r(joke)},
		{"cat src/prompts/*", r(joke, x)},
		{"cat src/prompts/{joke,x}.md", r(joke, x)},
		{"env cat src/prompts/joke.md", r(joke)},
		{"env LC_ALL=C cat src/prompts/joke.md", r(joke)},
		// Escapes the interpreter kept (shell.quoteWordEscapes).
		{`cat < src/prompts/jok\e.md`, r(joke)},
		{`f=src/prompts/jok\e.md; cat "$f"`, r(joke)},
		{"timeout 5 cat src/prompts/joke.md", r(joke)},
		{"nice -n 5 head src/prompts/joke.md", r(joke)},
		{"command cat src/prompts/joke.md", r(joke)},
		{"F=src/prompts/joke.md; cat $F", r(joke)},
		{"xargs cat <<< src/prompts/joke.md", r(joke)},
		{"echo src/prompts/joke.md | xargs -I{} cat {}", r(joke)},
		{"find src/prompts -name 'joke*' -exec cat {} +", r(joke)},
		{"find src -type f -exec grep -l text {} \\;", r("docs/x.md", joke, x)[1:]}, // the walk is under src
		{"find src -name '*.md' -print", r()},
		// Codex's reads of issue 31: xargs's items from a file, and find's
		// -path tests on the "./" it prints under ".".
		{"xargs -a list.txt cat", r(joke)},
		{"xargs --arg-file=list.txt -I{} cat {}", r(joke)},
		{"xargs -alist.txt head -n 5", r(joke)},
		{"find . -path ./src/prompts/joke.md -exec cat {} \\;", r(joke)},
		{"find . -name joke.md -exec cat {} \\;", r(joke)},
		{"find ./src/ -path './src/prompts/*' -exec cat {} \\;", r(joke, x)},
		{"f() { cat \"$1\"; }; f src/prompts/joke.md", r(joke)},
		{"bash -lc 'cat src/prompts/joke.md'", r(joke)},
		{"for f in src/prompts/*.md; do head -n 3 \"$f\"; done", r(joke, x)},
		{"cat $CLAUDE_PROJECT_DIR/a.md", r("a.md")},
		// The cases the word walk handled.
		{"cat notes.txt", r("notes.txt")},
		{"cat -n a.md docs/x.md", r("a.md", "docs/x.md")},
		{"sed -n '1,200p' src/prompts/joke.md", r(joke)},
		{"sed -n -e 1p -e 2p a.md", r("a.md")},
		{"sed -i 's/a/b/' a.md", r()},
		{"sed -ni 's/a/b/p' a.md", r()},
		{"head -n 20 a.md", r("a.md")},
		{"head -n20 a.md", r("a.md")},
		{"tail --lines 5 /abs/b.md", r("/abs/b.md")},
		{"nl -ba a.md", r("a.md")},
		{"less a.md", r("a.md")},
		{"rg -n TODO src/prompts/joke.md", r(joke)},
		{"rg TODO", r()},
		{"grep -e x -e y a.md", r("a.md")},
		{"grep -rn --include=*.md joke docs/x.md", r("docs/x.md")},
		{"grep -A 3 pattern a.md", r("a.md")},
		{"awk '{print}' a.md", r("a.md")},
		{`cat "quoted name.md" 'single.md' esc\ aped.md`, r("quoted name.md", "single.md", "esc aped.md")},
		{"wc -l < a.md", r("a.md")},
		{"cd src && cat ../a.md; echo done | tee out.txt", r("a.md")},
		{"FOO=1 cat a.md", r("a.md")},
		{"cat -- -dash.md", r("-dash.md")},
		{"echo notes.md", r()},
		{"cat 'unterminated", r()},
		{"cat a.md a.md", r("a.md")},
		{"cat $UNSET_VAR/a.md $(ls)", r("/a.md")}, // unset in the run followed: as bash would
		{"", r()},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			if got := ShellReads(tt.cmd, root, root, "/home/u"); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ShellReads(%q) = %q, want %q", tt.cmd, got, tt.want)
			}
		})
	}
}

// TestShellReadsEndedAway: a command reported in a folder away from the
// root (where Claude Code's Bash ended) is also read from the root when it
// may have changed directory on the way, however cd is spelt; one that
// cannot change directory started where it ended, and is read from there.
func TestShellReadsEndedAway(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"src/prompts/joke.md", "joke.md"} {
		p := filepath.Join(root, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("text\n"), 0o644)
	}
	cwd := filepath.Join(root, "src/prompts")
	inCwd, inRoot := filepath.Join(cwd, "joke.md"), filepath.Join(root, "joke.md")
	for _, tt := range []struct {
		cmd  string
		want []string
	}{
		{"cd . && cat joke.md", []string{inCwd, inRoot}},
		{`c\d . && cat joke.md`, []string{inCwd, inRoot}},
		{"$(echo cd) .; cat joke.md", []string{inCwd, inRoot}},
		{"f() { cd .; }; f; cat joke.md", []string{inCwd, inRoot}},
		{"eval 'cd .'; cat joke.md", []string{inCwd, inRoot}},
		{"pushd . >/dev/null; cat joke.md", []string{inCwd, inRoot}},
		// A cd the text does not show: a function of the user's shell
		// snapshot (zoxide's z). Every command is read from the root too.
		{"cat joke.md && z src", []string{inCwd, inRoot}},
		{"cat joke.md", []string{inCwd, inRoot}},
		{"cat joke.md | head -n 3", []string{inCwd, inRoot}},
		{"grep -q x joke.md && cat joke.md", []string{inCwd, inRoot}},
	} {
		if got := ShellReads(tt.cmd, cwd, root, "/home/u"); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ShellReads(%q) from %s = %q, want %q", tt.cmd, cwd, got, tt.want)
		}
	}
}
