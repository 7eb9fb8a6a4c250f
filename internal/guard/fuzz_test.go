package guard

import (
	"strings"
	"testing"
)

// FuzzCheckBash: no command text, however malformed, makes the guard panic
// or hang; the hook must answer every tool call.
func FuzzCheckBash(f *testing.F) {
	for _, s := range []string{
		"rm -rf tmp/validation", `echo "$(cat <<EOF`, "${", "$'", "$((", "`", `"\`, "a <<", "cat <<-X\n\tX\n",
		"for f in {a,{b,c}}; do rm $f; done", "find . -exec", "git -C", "xargs -I", "dd of=", "cd; cd -; rm x",
		"echo $'\\x41' > m", "a=(1 2); ${a[0]}", "f() { rm -rf tmp; }", "case x in a) rm y;; esac",
		`f(){ : > "$1"; }; f mappings.toml`, `declare -n r=x; x=m; : > $r`, `printf -v F '%s' m; : > "$F"`,
		"trap ': > m' EXIT", "cat <<'EOF' | sh\n: > m\nEOF", "eval 'diff <(a) >(b)'", "while :; do :; done",
		"echo x | xargs -I{} sh -c ': > {}'", "flock -s tmp/validation/lock sleep 1 &",
	} {
		f.Add(s)
	}
	root := "/p"
	set := testSet(Source{Root: root, Home: "/h", File: "/p/mappings.toml", StateDir: "/p/tmp/validation",
		Runs: []Run{{Name: "v", Command: "validators/v.sh"}}})
	f.Fuzz(func(t *testing.T, cmd string) {
		set.CheckBash(cmd, root)
		set.CheckBash(cmd, "")
	})
}

// TestBashLarge: pathological inputs stay cheap (no timing asserted; a
// blow-up would time the test out).
func TestBashLarge(t *testing.T) {
	set := testSet(Source{Root: "/p", File: "/p/mappings.toml", StateDir: "/p/tmp/validation"})
	for _, cmd := range []string{
		"rm " + strings.Repeat("{a,b}", 40),
		strings.Repeat("$(", 500) + "rm x" + strings.Repeat(")", 500),
		strings.Repeat("echo x | ", 5000) + "xargs rm",
		"cat <<EOF\n" + strings.Repeat("line\n", 100000) + "EOF",
		strings.Repeat("bash -c '", 50) + "rm x",
	} {
		set.CheckBash(cmd, "/p")
	}
}
