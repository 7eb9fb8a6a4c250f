package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	for _, o := range []Options{{TempPrefix: ".tmp-"}, {TempPrefix: ".f.tmp-", Perm: 0o644}, {NoSync: true}} {
		want := "content " + o.TempPrefix
		if err := Write(path, []byte(want), o); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != want {
			t.Errorf("%+v: read %q, %v", o, got, err)
		}
		if st, _ := os.Stat(path); o.Perm != 0 && st.Mode().Perm() != o.Perm {
			t.Errorf("%+v: mode %v", o, st.Mode())
		}
	}
	if des, _ := os.ReadDir(dir); len(des) != 1 {
		t.Errorf("temp files left: %v", des)
	}
}

func TestWriteFailureLeavesOld(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	os.WriteFile(path, []byte("old"), 0o644)
	// A path whose folder is gone cannot be written; a folder as target
	// cannot be renamed over.
	if err := Write(filepath.Join(dir, "missing", "f"), []byte("x"), Options{}); err == nil {
		t.Error("write into a missing folder succeeded")
	}
	os.Mkdir(filepath.Join(dir, "d"), 0o755)
	os.WriteFile(filepath.Join(dir, "d", "x"), nil, 0o644)
	if err := Write(filepath.Join(dir, "d"), []byte("x"), Options{}); err == nil {
		t.Error("rename over a non-empty folder succeeded")
	}
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Errorf("old file changed: %q", got)
	}
	des, _ := os.ReadDir(dir)
	if len(des) != 2 {
		t.Errorf("temp files left: %v", des)
	}
}
