package gate

import (
	"testing"
)

// removeCodexWall undoes mergeCodexWall byte for byte, and leaves a
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
			out, removed, left, err := removeCodexWall(append(merged, tc.extra...))
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
	if _, _, _, err := removeCodexWall([]byte("[a\n")); err == nil {
		t.Error("a file that is not TOML was not refused")
	}
}

// The plain paths older gate inits wrote go as the launchers do.
func TestUninstallOldPlainForm(t *testing.T) {
	for _, c := range agentClients {
		if c.IsPlugin() {
			continue
		}
		owned := c.owned("/p", "bin")
		old := owned[len(c.Hooks):]
		data, added, err := c.Merge([]byte(`{"version": 1}`), old)
		if err != nil || len(added) != len(old) {
			t.Fatalf("%s: merge: %v, added %d", c.Name, err, len(added))
		}
		u := undo{}
		_, u.r, _, err = c.Remove(data, owned, nil)
		if err != nil || len(u.r.Removed) != len(old) || len(u.r.Left) > 0 {
			t.Errorf("%s: %v, removed %q, left %q", c.Name, err, u.r.Removed, u.r.Left)
		}
	}
}
