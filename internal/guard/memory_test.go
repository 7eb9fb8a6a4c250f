package guard

import (
	"runtime"
	"strings"
	"testing"
)

// memoryAttacks build a string or a list past any memory the hook has,
// each ending in a command that names a protected path without writing
// it: the dry run must stop at its bound and deny conservatively, never
// die of Go's fatal out-of-memory (exit 2).
var memoryAttacks = []string{
	`x=a; for i in {1..40}; do x=$x$x; done; echo mappings.toml`,
	`x=a; for ((i=0; i<40; i++)); do x=$x$x; done; echo mappings.toml`,
	`x=a; while :; do x="$x$x"; done; echo mappings.toml`,
	`x=a; for ((;;)); do x+=$x; done # mappings.toml`,
	`x=a; until false; do y=$x$x; x=$y; done; echo mappings.toml`,
	`a=(a); for i in {1..40}; do a=("${a[@]}" "${a[@]}"); done; echo mappings.toml`,
	`declare -A m; x=a; for i in {1..40}; do x=$x$x; m[$i]=$x; done; echo mappings.toml`,
	`set -- a; for i in {1..40}; do set -- "$@" "$@"; done; echo mappings.toml`,
	`f(){ f "$@" "$@"; }; f a; echo mappings.toml`,
	`f(){ x=$x$x; f; }; x=a; f; echo mappings.toml`,
	`x=a; x=$x$x && x=$x$x` + strings.Repeat(` && x=$x$x`, 38) + `; echo mappings.toml`,
	`x=abcdefgh; x=${x//?/$x}; x=${x//?/$x}; x=${x//?/$x}; echo mappings.toml`,
	`x=a; for i in {1..40}; do eval 'x=$x$x'; done; echo mappings.toml`,
	`bash -c 'x=a; while :; do x=$x$x; done'; echo mappings.toml`,
	`printf '%*s' 2000000000 x > /tmp/y; echo mappings.toml`,
	`printf -v x '%0999999999d' 0; echo mappings.toml`,
	`x=$(printf '%.0s' {1..10}); while :; do x=$x$x$x$x; done; echo mappings.toml`,
	`x=a; for i in {1..40}; do read -r x <<< "$x$x"; done; echo mappings.toml`,
	`x=a; for i in {1..40}; do x=$(echo "$x$x"); done; echo mappings.toml`,
	`y=` + strings.Repeat(`$x`, 300) + `; echo mappings.toml`,
	// Output kept by $(…) before any variable holds it.
	`x=a; for i in {1..17}; do x=$x$x; done; y=$(while :; do echo $x; done); echo mappings.toml`,
	`y=$(for i in {1..1000}; do printf '` + strings.Repeat("a", 200) + `%s' {1..1000}; done); echo mappings.toml`,
	`y=$(while :; do declare -p; done); echo mappings.toml`,
	// Nesting that would make every pass over the script slow.
	strings.Repeat("{ ", 20000) + "echo mappings.toml;" + strings.Repeat(" }", 20000),
	strings.Repeat("{ ", 20000) + "echo $PIPESTATUS mappings.toml;" + strings.Repeat(" }", 20000),
	`eval "` + strings.Repeat("{ ", 5000) + "echo mappings.toml;" + strings.Repeat(" }", 5000) + `"`,
}

func TestMemoryBound(t *testing.T) {
	root, set := project(t, nil)
	for _, cmd := range memoryAttacks {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		h := set.CheckBash(cmd, root)
		runtime.ReadMemStats(&after)
		if h == nil || !h.doubt || h.Protected.Show != "mappings.toml" {
			t.Errorf("%q: %v, want a conservative deny naming mappings.toml", cmd, h)
			continue
		}
		if !strings.Contains(h.Reason(), "guard") {
			t.Errorf("%q: reason %q", cmd, h.Reason())
		}
		// A generous bound, far below the gigabytes of the attack.
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 512<<20 {
			t.Errorf("%q: the dry run allocated %d MB", cmd, grew>>20)
		}
	}
}

// TestMemoryBoundWrites: the attack in front of a write is still a deny,
// and a command that holds its text within the bound is judged in full.
func TestMemoryBoundWrites(t *testing.T) {
	root, set := project(t, nil)
	for _, c := range []bashCase{
		{`x=a; for i in $(seq 40); do x=$x$x; done; echo "$x" > mappings.toml`, "mappings.toml"},
		{`x=a; for i in {1..40}; do x=$x$x; done; rm -rf tmp/validation`, "tmp/validation"},
		{`x=a; for i in {1..10}; do x=$x$x; done; f=mappings.toml; : > "$f"`, "mappings.toml"},
		{`false; echo $?; x=1; [ $? -eq 0 ] && rm mappings.toml`, "mappings.toml"},
		{`x=a; for i in {1..10}; do x=$x$x; done; echo ${#x} > /tmp/n`, ""},
		{`printf '%5s|%-8s\n' a b`, ""},
	} {
		h := set.CheckBash(c.cmd, root)
		got := ""
		if h != nil {
			got = h.Protected.Show
		}
		if got != c.want {
			t.Errorf("%q: hit %q, want %q", c.cmd, got, c.want)
		}
	}
}
