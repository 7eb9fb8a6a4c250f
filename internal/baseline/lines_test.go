package baseline

import (
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

func TestAddedLines(t *testing.T) {
	tests := []struct {
		a, b  string
		added []int
	}{
		{"", "", nil},
		{"", "x\ny", []int{0, 1}},
		{"x\ny", "", nil},
		{"a\nb\nc", "a\nb\nc", nil},
		{"a\nb\nc", "a\nX\nb\nc", []int{1}},
		{"a\nb\nc", "a\nc", nil},
		{"a\nb\nc", "a\nB\nc", []int{1}},
		{"a\nb\nc\nd", "d\na\nb\nc", []int{0}},
		{"x\nx\nx", "x\nx\nx\nx", []int{3}},
		{"a\nb", "b\na", []int{1}},
		{"func f() {\n}\n", "func f() {\n\tt.Skip(\"flaky\")\n}\n", []int{1}},
	}
	for _, tt := range tests {
		got, err := AddedLines(splitLines([]byte(tt.a)), splitLines([]byte(tt.b)))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, tt.added) {
			t.Errorf("AddedLines(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.added)
		}
	}
}

// TestAddedLinesMinimal checks against a quadratic LCS on random inputs:
// the lines kept (b minus added) must be a common subsequence as long as
// the longest.
func TestAddedLinesMinimal(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	gen := func() []string {
		n := r.Intn(40)
		out := make([]string, n)
		for i := range out {
			out[i] = string(rune('a' + r.Intn(5)))
		}
		return out
	}
	for i := 0; i < 3000; i++ {
		a, b := gen(), gen()
		added, err := AddedLines(a, b)
		if err != nil {
			t.Fatal(err)
		}
		skip := map[int]bool{}
		for _, j := range added {
			skip[j] = true
		}
		var kept []string
		for j, l := range b {
			if !skip[j] {
				kept = append(kept, l)
			}
		}
		if !subsequence(kept, a) || len(kept) != lcs(a, b) {
			t.Fatalf("a=%q b=%q: kept %q (len %d), lcs %d", strings.Join(a, ""), strings.Join(b, ""), kept, len(kept), lcs(a, b))
		}
	}
}

func subsequence(s, of []string) bool {
	i := 0
	for _, x := range of {
		if i < len(s) && s[i] == x {
			i++
		}
	}
	return i == len(s)
}

func lcs(a, b []string) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}

func TestSplitLines(t *testing.T) {
	for in, want := range map[string][]string{
		"": nil, "\n": {""}, "a": {"a"}, "a\n": {"a"}, "a\r\nb": {"a", "b"}, "a\n\n": {"a", ""},
	} {
		if got := splitLines([]byte(in)); !reflect.DeepEqual(got, want) {
			t.Errorf("splitLines(%q) = %q, want %q", in, got, want)
		}
	}
}
