package baseline

import "testing"

func TestLineDiff(t *testing.T) {
	for _, tt := range []struct{ old, new, want string }{
		{"a\nb\nc\n", "a\nb\nc\n", ""},
		{"a\nb\nc\n", "a\nB\nc\n", "-2: b\n+2: B\n"},
		{"a\n", "a\nb\n", "+2: b\n"},
		{"a\nb\n", "b\n", "-1: a\n"},
		{"", "x\r\n", "+1: x\n"},
	} {
		got, err := LineDiff([]byte(tt.old), []byte(tt.new))
		if err != nil || got != tt.want {
			t.Errorf("LineDiff(%q, %q) = %q, %v; want %q", tt.old, tt.new, got, err, tt.want)
		}
	}
}

func TestArmed(t *testing.T) {
	recs := []*Snapshot{{
		Files: map[string]State{"a.go": {Exists: true, Text: []byte("x"), Kept: true}},
		Tree:  map[string]State{"a.go": {Exists: true}, "README.md": {Exists: true}},
	}}
	if st, ok := Armed(recs, "a.go"); !ok || string(st.Text) != "x" {
		t.Errorf("a.go: %+v %v, want its text as recorded", st, ok)
	}
	if st, ok := Armed(recs, "new.go"); !ok || st.Exists {
		t.Errorf("new.go: %+v %v, want known not to have been there", st, ok)
	}
	if _, ok := Armed(recs, "README.md"); ok {
		t.Error("README.md: there, text not recorded: want not found")
	}
	if _, ok := Armed([]*Snapshot{{}}, "new.go"); ok {
		t.Error("a record without a tree cannot say a file is new")
	}
}
