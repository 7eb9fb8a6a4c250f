package trust

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/stopgate/stopgate/internal/regular"
)

// markName is the file detect leaves in the folder of a session's
// subagents once it arms a prompt: a sign of stopgate that `rm -rf` in the
// project cannot take (the guard protects it with the transcript).
const markName = "stopgate-armed"

// markFile is the session's mark; "" unless the transcript is a .jsonl outside root.
func markFile(transcript, root string) string {
	t := filepath.Clean(transcript)
	if transcript == "" || !filepath.IsAbs(t) || filepath.Ext(t) != ".jsonl" {
		return ""
	}
	if rel, err := filepath.Rel(root, t); err == nil && !strings.HasPrefix(rel, "..") {
		return ""
	}
	return filepath.Join(strings.TrimSuffix(t, ".jsonl"), markName)
}

// Mark records that the session armed a prompt of root; best effort (see reconcile).
func Mark(transcript, root string) {
	f := markFile(transcript, root)
	if f == "" || Marked(transcript, root) {
		return
	}
	if os.MkdirAll(filepath.Dir(f), 0o700) == nil {
		os.WriteFile(f, []byte(filepath.Clean(root)+"\n"), 0o600)
	}
}

// Marked reports whether Mark recorded the session for the project at root.
func Marked(transcript, root string) bool {
	f := markFile(transcript, root)
	if f == "" {
		return false
	}
	data, err := regular.ReadFile(f, 64<<10)
	return err == nil && strings.TrimSpace(string(data)) == filepath.Clean(root)
}
