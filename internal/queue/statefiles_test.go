package queue

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.json")
	err := Locked(filepath.Join(dir, LockName), func() error {
		os.WriteFile(filepath.Join(dir, TempPrefix+"orphan"), nil, 0o644)
		Sweep(dir, Temps)
		return WriteJSON(path, map[string]int{"n": 1})
	})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]int
	if err := ReadJSON(path, &got); err != nil || got["n"] != 1 {
		t.Errorf("ReadJSON = %v, %v", got, err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, TempPrefix+"*")); len(m) != 0 {
		t.Errorf("temp files left: %v", m)
	}
	for _, s := range []string{"plain", "a/b", ".hidden", "..", "sp ace"} {
		seg := Segment(s)
		if filepath.Base(seg) != seg || seg[0] == '.' || Unsegment(seg) != s {
			t.Errorf("Segment(%q) = %q, Unsegment = %q", s, seg, Unsegment(seg))
		}
	}
}
