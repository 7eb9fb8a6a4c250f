package validator

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestShownFailuresFirst: for each format the gate recognises, in output
// written by the real tool (testdata/failures), a failing test's name comes
// first and its message is shown, when the output does not fit n lines.
func TestShownFailuresFirst(t *testing.T) {
	tests := []struct {
		file  string
		n     int
		first string // the first line shown
		says  string // a line shown among the first n
	}{
		{"tap.txt", 20, "not ok 2 - subtracts", "    2 !== 1"},
		{"gotest-v.txt", 4, "--- FAIL: TestAdd (0.00s)", "    calc_test.go:7: Add(2, 3) = -1, want 5"},
		{"gotest.txt", 4, "--- FAIL: TestAdd (0.00s)", "    calc_test.go:7: Add(2, 3) = -1, want 5"},
		{"gotest.json", 6, "--- FAIL: TestAdd (0.00s)", "    calc_test.go:7: Add(2, 3) = -1, want 5"},
		{"gobuild.json", 3, "# example.com/calc [example.com/calc.test]", "./calc.go:3:37: undefined: c"},
		{"pytest.txt", 10, "___________________________________ test_add ___________________________________", "E       assert -1 == 5"},
		{"jest.txt", 8, "  ● math › adds", "    Received: -1"},
		{"vitest.txt", 8, " FAIL  v/sum.test.ts > math > adds", "AssertionError: expected -1 to be 5 // Object.is equality"},
		{"vitest-colour.txt", 8, " FAIL  v/sum.test.ts > math > adds", "AssertionError: expected -1 to be 5 // Object.is equality"},
		{"junit.xml", 4, "FAIL v/sum.test.ts > math > adds", "  AssertionError: expected -1 to be 5 // Object.is equality"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			out, err := os.ReadFile("testdata/failures/" + tt.file)
			if err != nil {
				t.Fatal(err)
			}
			got := Result{Output: string(out)}.Shown(tt.n, OutputFailures)
			if len(got) > tt.n+1 {
				t.Errorf("%d lines shown, want at most %d and a note", len(got), tt.n)
			}
			if got[0] != tt.first || !slices.Contains(got[:min(tt.n, len(got))], tt.says) {
				t.Errorf("Shown(%d) = \n%s\nwant first %q and %q", tt.n, strings.Join(got, "\n"), tt.first, tt.says)
			}
		})
	}
}

// TestShownTAPFailureAtTheEnd: 2,000 lines of TAP whose one failure is the
// last test, as node --test writes them: the failure and its assertion
// come first, then the summary, then how much was left out.
func TestShownTAPFailureAtTheEnd(t *testing.T) {
	var b strings.Builder
	b.WriteString("TAP version 13\n")
	for i := 1; i < 2000; i++ {
		fmt.Fprintf(&b, "ok %d - case %d\n", i, i)
	}
	b.WriteString("not ok 2000 - case 2000\n  ---\n  duration_ms: 0.2\n  location: '/p/t.test.js:9:1'\n" +
		"  error: |-\n    Expected values to be strictly equal:\n\n    3 !== 4\n\n  ...\n1..2000\n# tests 2000\n# pass 1999\n# fail 1\n")
	got := Result{Output: b.String()}.Shown(10, OutputFailures)
	want := []string{
		"not ok 2000 - case 2000", "  location: '/p/t.test.js:9:1'", "  error: |-", "    Expected values to be strictly equal:", "    3 !== 4",
		"1..2000", "# tests 2000", "# pass 1999", "# fail 1", "… 2005 more lines",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Shown(10) =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if head := (Result{Output: b.String()}).Shown(3, OutputHead); !slices.Equal(head, []string{"TAP version 13", "ok 1 - case 1", "ok 2 - case 2", "… 2011 more lines"}) {
		t.Errorf(`Shown(3, "head") = %q, want the first lines`, head)
	}
}

// TestShownAsWritten: output that fits is shown whole and in order, and
// output in which nothing reads as failing from its start.
func TestShownAsWritten(t *testing.T) {
	fits := "ok 1 - a\nnot ok 2 - b\n# fail 1\n"
	if got := (Result{Output: fits}).Shown(3, OutputFailures); !slices.Equal(got, []string{"ok 1 - a", "not ok 2 - b", "# fail 1"}) {
		t.Errorf("output that fits: %q", got)
	}
	plain := strings.Repeat("compiling\n", 50)
	if got := (Result{Output: plain, Dropped: 7}).Shown(2, OutputFailures); !slices.Equal(got, []string{"compiling", "compiling", "… 48 more lines and 7 more bytes (output is capped)"}) {
		t.Errorf("nothing failing: %q", got)
	}
	other := strings.Repeat("checking\n", 50) + "src/a.ts(3,5): error TS2322: Type 'string' is not assignable to type 'number'.\n" + strings.Repeat("checking\n", 5)
	if got := (Result{Output: other}).Shown(4, OutputFailures); got[0] != "src/a.ts(3,5): error TS2322: Type 'string' is not assignable to type 'number'." {
		t.Errorf("a line of unknown output that reads as failing is not first: %q", got)
	}
}

// TestCappedKeepsTailAndFailures: past its limit, with tail, capped keeps
// the first lines, the failing blocks it let go (whole, while half the
// limit lasts) and the last bytes from a line's start; it counts the bytes
// past the limit; written a byte at a time or at once, it keeps the same.
func TestCappedKeepsTailAndFailures(t *testing.T) {
	var b strings.Builder
	b.WriteString("TAP version 13\n")
	for i := 1; i <= 3000; i++ {
		if i == 1500 {
			b.WriteString("not ok 1500 - middle\n  ---\n  error: 'middle broke'\n  ...\n")
			continue
		}
		fmt.Fprintf(&b, "ok %d - case %d\n", i, i)
	}
	b.WriteString("# fail 1\n")
	out := b.String()
	for _, chunk := range []int{1, 7, len(out)} {
		c := &capped{limit: 4 << 10, tail: true, block: -1}
		for s := out; s != ""; s = s[min(chunk, len(s)):] {
			c.Write([]byte(s[:min(chunk, len(s))]))
		}
		kept := c.String()
		if !strings.HasPrefix(kept, "TAP version 13\nok 1 - case 1\n") || !strings.HasSuffix(kept, "ok 3000 - case 3000\n# fail 1\n") {
			t.Errorf("chunk %d: head or tail lost:\n%s", chunk, kept)
		}
		if !strings.Contains(kept, "\nnot ok 1500 - middle\n  ---\n  error: 'middle broke'\n  ...\n") {
			t.Errorf("chunk %d: the failing block in the middle is lost", chunk)
		}
		if len(kept) > 4<<10 || c.dropped != int64(len(out)-4<<10) {
			t.Errorf("chunk %d: kept %d bytes and counted %d past the limit, want at most %d and %d", chunk, len(kept), c.dropped, 4<<10, len(out)-4<<10)
		}
		for _, l := range strings.Split(strings.TrimSuffix(kept, "\n"), "\n") {
			if !strings.HasPrefix(l, "ok ") && !strings.HasPrefix(l, "not ok") && !strings.HasPrefix(l, "  ") && !strings.HasPrefix(l, "#") && !strings.HasPrefix(l, "TAP") {
				t.Errorf("chunk %d: a cut line is kept: %q", chunk, l)
			}
		}
	}
}

// TestRunHugeOutputKeepsTail: with Output "failures", 50 MiB of output
// whose failure is at its end is kept to the limit with the failure, in
// memory bounded as with the head (counted in bytes allocated).
func TestRunHugeOutputKeepsTail(t *testing.T) {
	run := `yes 'ok 1 - case' | head -c 52428800; printf '\nnot ok 2 - last\n  error: boom\n'`
	env := Env{Dir: t.TempDir(), Output: OutputFailures}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r := Run(context.Background(), env, []Spec{{Name: "loud", Run: run}})[0]
	runtime.ReadMemStats(&after)
	if !r.Passed || !strings.HasSuffix(r.Output, "\nnot ok 2 - last\n  error: boom\n") || len(r.Output) > defaultOutputLimit {
		t.Fatalf("Passed=%v, kept %d bytes ending %q", r.Passed, len(r.Output), r.Output[max(len(r.Output)-40, 0):])
	}
	if allocated := after.TotalAlloc - before.TotalAlloc; allocated > 4<<20 {
		t.Errorf("allocated %d bytes for 50 MiB of output, want under 4 MiB", allocated)
	}
}
