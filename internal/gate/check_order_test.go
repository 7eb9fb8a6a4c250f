package gate

import (
	"slices"
	"testing"
)

// TestSortByLocation: files keep the order they were checked in, lines
// ascend within a file, whatever order the findings came in.
func TestSortByLocation(t *testing.T) {
	fs := []finding{
		{Loc: ".claude/settings.json:9"}, {Loc: "bin/gate"}, {Loc: ".claude/settings.json:3:5"},
		{Loc: ".claude/settings.local.json:2"}, {Loc: "bin/gate"}, {Loc: ".claude/settings.json:1"},
	}
	sortByLocation(fs)
	var got []string
	for _, f := range fs {
		got = append(got, f.Loc)
	}
	want := []string{".claude/settings.json:1", ".claude/settings.json:3:5", ".claude/settings.json:9", "bin/gate", "bin/gate", ".claude/settings.local.json:2"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}
