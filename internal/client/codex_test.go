package client

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMergeCodexWall(t *testing.T) {
	want := []string{".codex", "mappings.toml", "validators"}
	full, _, _, err := mergeCodexWall(nil, want)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, in   string
		note, err  string // substrings; "" none
		added      int
		keepsBytes bool // the input is a prefix of the output after default_permissions
	}{
		{name: "empty", in: "", added: 2},
		{name: "no final newline", in: "model = \"o3\"", added: 2, keepsBytes: true},
		{name: "user table last", in: "[tui]\ntheme = \"dark\"\n", added: 2, keepsBytes: true},
		{name: "already there", in: string(full), added: 0},
		{name: "lacks one, init's table last", in: strings.TrimSuffix(string(full), "\"validators\" = \"read\"\n"), added: 1, keepsBytes: true},
		{name: "lacks one, a table after", in: strings.TrimSuffix(string(full), "\"validators\" = \"read\"\n") + "[tui]\n", note: "lacks validators"},
		{name: "legacy sandbox", in: "sandbox_mode = \"danger-full-access\"\n", note: "older sandbox settings"},
		{name: "other profile", in: "default_permissions = \":workspace\"\n", note: "another permission profile"},
		{name: "not TOML", in: "model = \n", err: "expected"},
		{name: "a quote in a path", in: "", added: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := want
			if tc.name == "a quote in a path" {
				w = append(w, `we"ird\path`)
			}
			out, added, note, err := mergeCodexWall([]byte(tc.in), w)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.note != "" {
				if !strings.Contains(note, tc.note) || string(out) != tc.in || len(added) != 0 {
					t.Fatalf("note %q added %v, want %q and the file unchanged", note, added, tc.note)
				}
				return
			}
			if note != "" || len(added) != tc.added {
				t.Fatalf("note %q added %v, want %d additions", note, added, tc.added)
			}
			st, err := inspectCodex(out)
			if err != nil || st.Profile != codexProfile || len(st.lacking(w)) > 0 {
				t.Fatalf("merged file is no wall (%v):\n%s", err, out)
			}
			body := strings.TrimPrefix(string(out), "default_permissions = \"stopgate\"\n")
			if tc.keepsBytes && !strings.HasPrefix(body, tc.in) && !strings.HasPrefix(string(out), tc.in) {
				t.Fatalf("the user's bytes were not kept:\n%s", out)
			}
		})
	}
}

// codexWall.Remove undoes mergeCodexWall byte for byte, and leaves a
// profile changed since.
func TestRemoveCodexWall(t *testing.T) {
	paths := []string{".codex", "mappings.toml"}
	for _, tc := range []struct {
		name, in string
		extra    string // appended after the merge: a hand edit
		removed  int
		left     int
		same     bool // back to in
	}{
		{name: "empty", in: "", removed: 2, same: true},
		{name: "keys and tables", in: "model = \"x\"\n\n[tui]\ntheme = \"dark\"\n", removed: 2, same: true},
		{name: "entry added later", in: "model = \"x\"\n", extra: "\"validators\" = \"read\"\n", removed: 2, same: true},
		{name: "hand-made writable", in: "model = \"x\"\n", extra: "\"src\" = \"write\"\n", removed: 1, left: 1},
		{name: "another table after", in: "", extra: "[tui]\n", removed: 1, left: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			merged, _, _, err := mergeCodexWall([]byte(tc.in), paths)
			if err != nil {
				t.Fatal(err)
			}
			out, r, _, err := codexWall{}.Remove(append(merged, tc.extra...), "", nil)
			removed, left := r.Removed, r.Left
			if err != nil {
				t.Fatal(err)
			}
			if len(removed) != tc.removed || len(left) != tc.left {
				t.Errorf("removed %q, left %q", removed, left)
			}
			if tc.same && string(out) != tc.in {
				t.Errorf("got %q, want %q", out, tc.in)
			}
		})
	}
	if _, _, _, err := (codexWall{}).Remove([]byte("[a\n"), "", nil); err == nil {
		t.Error("a file that is not TOML was not refused")
	}
}

// codexFault is Codex's own rule (codex-rs/core/src/config/permissions.rs,
// compile_read_write_glob_path; the cases of its permissions tests): a read
// or write entry may not hold * ? [ ] but a trailing "/**"; a deny entry
// may; and a path that is not there is bound at its first missing folder.
func TestCodexFault(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "docs"), 0o755)
	for _, tc := range []struct {
		key, access   string
		glob          bool
		missingFolder string
	}{
		{"docs", "read", false, ""},
		{"docs/**", "read", false, ""},
		{"docs/**", "write", false, ""},
		{"src/**/*.rs", "read", true, ""},
		{"*", "write", true, ""},
		{"**", "write", true, ""},
		{"node_modules/@stopgate/*/bin/gate", "read", true, ""},
		{"a?c", "read", true, ""},
		{"[ab]", "read", true, ""},
		{"**/*.env", "deny", false, ""},
		{":root", "read", false, ""},
		{".", "write", false, ""},
		{"docs/x", "read", false, "docs/x"},
		{"bin/gate", "read", false, "bin"},
		{"bin/a/b", "read", false, "bin"},
	} {
		fault, missing := codexFault(root, tc.key, tc.access)
		if glob := strings.Contains(fault, "only supports `deny` access"); glob != tc.glob || missing != tc.missingFolder {
			t.Errorf("codexFault(%q, %q) = %q, %q; want glob %v, missing %q", tc.key, tc.access, fault, missing, tc.glob, tc.missingFolder)
		}
	}
}
