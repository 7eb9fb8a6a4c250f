package gate

import (
	"testing"
)

// The plain paths older gate inits wrote go as the launchers do.
func TestUninstallOldPlainForm(t *testing.T) {
	for _, c := range agentClients {
		if c.IsPlugin() {
			continue
		}
		owned := owned(c, "/p", binInstall("/p", "bin"))
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
