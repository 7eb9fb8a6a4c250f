package trust

import (
	"os"
	"path/filepath"
	"testing"
)

func TestMarkFile(t *testing.T) {
	for _, tt := range []struct{ transcript, root, want string }{
		{"/h/.claude/projects/p/s1.jsonl", "/p", "/h/.claude/projects/p/s1/stopgate-armed"},
		{"/p/t.jsonl", "/p", ""},                      // in the project: the agent writes it
		{"/p/x/t.jsonl", "/p", ""},                    // deeper in it
		{"/h/t.json", "/p", ""},                       // not a transcript
		{"t.jsonl", "/p", ""},                         // relative
		{"", "/p", ""},                                // none
		{"/pp/t.jsonl", "/p", "/pp/t/stopgate-armed"}, // a sibling folder is outside
	} {
		if got := markFile(tt.transcript, tt.root); got != tt.want {
			t.Errorf("markFile(%q, %q) = %q, want %q", tt.transcript, tt.root, got, tt.want)
		}
	}
}

// TestMarkIsThisProject: a mark names its project; another's does not count.
func TestMarkIsThisProject(t *testing.T) {
	home := t.TempDir()
	tr := filepath.Join(home, "s1.jsonl")
	Mark(tr, "/p")
	if !Marked(tr, "/p") || Marked(tr, "/q") {
		t.Errorf("Marked: /p %v, /q %v", Marked(tr, "/p"), Marked(tr, "/q"))
	}
	if _, err := os.Stat(filepath.Join(home, "s1", markName)); err != nil {
		t.Error(err)
	}
}
