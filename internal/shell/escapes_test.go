package shell

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// TestPrepareReadsWordsAsBash runs words written with escapes
// in the interpreter, prepared, and in bash: both must print the same
// value, and so must the prepared script printed back and parsed again
// (the guard reparses what eval, trap and source run).
func TestPrepareReadsWordsAsBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash to compare with")
	}
	for _, src := range []string{
		`f=mapping\s.toml; echo "$f"`,
		`f=mappings\.toml; echo "$f"`,
		`export f=tmp/valid\ation; echo "$f"`,
		`declare f=a\ b; echo "$f"`,
		`g() { local f=x\y; echo "$f"; }; g`,
		`f=it\'s; echo "$f"`,
		`f=\~/x; echo "$f"`,
		`f=a\$b; echo "$f"`,
		`f=\*; echo "$f"`,
		`f=caf\é; echo "$f"`,
		`f=a\\b; echo "$f"`,
		`f="a\sb"; echo "$f"`,
		`f='a\sb'; echo "$f"`,
		`f=a"\s"b\s; echo "$f"`,
		"f=a\\\nb; echo \"$f\"",
		`f=pre$HOME\x; echo "${f#$HOME}"`,
		`f+=\x; f+=\y; echo "$f"`,
		`echo ${x:-mapping\s.toml}`,
		`echo "${x:-mapping\s.toml}"`,
		`: ${x:=mapping\s.toml}; echo "$x"`,
		`f=${y:-mapping\s.toml}; echo "$f"`,
		`f=x; f=${f/x/mapping\s.toml}; echo "$f"`,
		`f=a.b; echo "${f/a\.b/c}"`,
		`f=a.b; echo ${f/a\./\~}`,
		`declare -A m=([k]=mapping\s.toml); echo "${m[k]}"`,
		`a=(x\y "p\q"); echo "${a[@]}"`,
		`echo x\y "a\sb" 'c\d'`,
		`echo "$(f=mapping\s.toml; echo "$f" "a\sb")"`,
		"echo \"`f=mapping\\s.toml; echo $f`\"",
		`echo "${x:-$(f=mapping\s.toml; echo "$f")}"`,
	} {
		want, err := exec.Command(bash, "-c", src).Output()
		if err != nil {
			t.Fatalf("bash -c %q: %v", src, err)
		}
		if got := dryEcho(t, src); got != string(want) {
			t.Errorf("%q: the interpreter prints %q, bash %q", src, got, want)
		}
		f := parseOK(t, src)
		quoteWordEscapes(f)
		var printed strings.Builder
		if err := syntax.NewPrinter().Print(&printed, f); err != nil {
			t.Fatal(err)
		}
		if got := dryEcho(t, printed.String()); got != string(want) {
			t.Errorf("%q printed back as %q: the interpreter prints %q, bash %q", src, printed.String(), got, want)
		}
	}
}

func parseOK(t *testing.T, src string) *syntax.File {
	t.Helper()
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		t.Fatalf("%q: %v", src, err)
	}
	return f
}

// dryEcho is what the interpreter prints for src with its assignments'
// escapes prepared.
func dryEcho(t *testing.T, src string) string {
	t.Helper()
	f := parseOK(t, src)
	quoteWordEscapes(f)
	var out bytes.Buffer
	r, err := interp.New(interp.StdIO(nil, &out, &out))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Run(context.Background(), f); err != nil {
		t.Fatalf("%q: %v", src, err)
	}
	return out.String()
}
