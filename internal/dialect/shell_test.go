package dialect

import (
	"reflect"
	"testing"
)

func TestShellReads(t *testing.T) {
	tests := []struct {
		cmd  string
		want []string
	}{
		{"cat notes.txt", []string{"/p/notes.txt"}},
		{"cat -n a.md b.md", []string{"/p/a.md", "/p/b.md"}},
		{"sed -n '1,200p' src/prompts/joke.md", []string{"/p/src/prompts/joke.md"}},
		{"sed -n -e 1p -e 2p x.md", []string{"/p/x.md"}},
		{"sed -i 's/a/b/' x.md", []string{}},
		{"sed -ni 's/a/b/p' x.md", []string{}},
		{"head -n 20 a.md", []string{"/p/a.md"}},
		{"head -n20 a.md", []string{"/p/a.md"}},
		{"tail --lines 5 /abs/b.md", []string{"/abs/b.md"}},
		{"nl -ba a.md", []string{"/p/a.md"}},
		{"less a.md", []string{"/p/a.md"}},
		{"rg -n TODO src/prompts/joke.md", []string{"/p/src/prompts/joke.md"}},
		{"rg TODO", []string{}},
		{"grep -e x -e y a.md", []string{"/p/a.md"}},
		{"grep -rn --include=*.md joke docs/x.md", []string{"/p/docs/x.md"}},
		{"grep -A 3 pattern a.md", []string{"/p/a.md"}},
		{"awk '{print}' a.md", []string{"/p/a.md"}},
		{`cat "quoted name.md" 'single.md' esc\ aped.md`, []string{"/p/quoted name.md", "/p/single.md", "/p/esc aped.md"}},
		{`cat "say \"hi\".md" "a\\b.md"`, []string{`/p/say "hi".md`, `/p/a\b.md`}}, // backslashes in double quotes, as bash resolves them
		{"cat $HOME/x.md *.md $(ls) ~/y.md", []string{}},
		{"wc -l < in.md", []string{"/p/in.md"}},
		{"cd sub && cat ../a.md; echo done | tee out.txt", []string{"/a.md"}},
		{"bash -lc 'cat inner.md'", []string{"/p/inner.md"}},
		{"FOO=1 cat a.md", []string{"/p/a.md"}},
		{"cat -- -dash.md", []string{"/p/-dash.md"}},
		{"echo notes.md", []string{}},
		{"cat 'unterminated", []string{}},
		{"cat a.md a.md", []string{"/p/a.md"}},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			if got := ShellReads(tt.cmd, "/p"); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ShellReads(%q) = %q, want %q", tt.cmd, got, tt.want)
			}
		})
	}
}

func TestPatchFiles(t *testing.T) {
	patch := "*** Begin Patch\n*** Update File: a.go\n*** Move to: b.go\n@@\n-x\n+y\n*** Delete File: c.md\r\n*** Add File: d.txt\n+z\n*** End Patch"
	want := []string{"a.go", "b.go", "c.md", "d.txt"}
	if got := PatchFiles(patch); !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
