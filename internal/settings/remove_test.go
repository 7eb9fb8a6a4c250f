package settings

import (
	"strings"
	"testing"
)

// Remove undoes Merge and MergeWall byte for byte, whatever the file held
// before, and leaves what was changed by hand since.
func TestRemoveUndoesMerge(t *testing.T) {
	want := []Hook{detectRead, gateStop, guard}
	deny := []string{"Edit(/mappings.toml)", "Edit(/bin/gate)"}
	for _, before := range []string{
		"",
		"{}\n",
		"{\n    \"model\": \"opus\",\n    \"hooks\": {\n        \"Stop\": [\n            {\"hooks\": [{\"type\": \"command\", \"command\": \"say done\"}]}\n        ]\n    },\n    \"permissions\": {\"allow\": [\"Bash(ls)\"], \"deny\": [\"Read(.env)\"]}\n}\n",
		`{"sandbox":{"excludedCommands":[]},"hooks":{"Notification":[]}}`,
	} {
		merged, _, err := Merge([]byte(before), want)
		if err != nil {
			t.Fatal(err)
		}
		merged, _, _, err = MergeWall(merged, deny)
		if err != nil {
			t.Fatal(err)
		}
		out, r, err := Remove(merged, want, []string{"detect", "gate"}, deny)
		if err != nil {
			t.Fatal(err)
		}
		if wantOut := string(normalize([]byte(before))); string(out) != wantOut && !(before == "" && string(out) == "{}\n") {
			t.Errorf("Remove after Merge of %q:\n%s\nwant\n%s", before, out, wantOut)
		}
		if len(r.Left) != 0 || len(r.Removed) != len(want)+3+len(deny) {
			t.Errorf("removed %q, left %q", r.Removed, r.Left)
		}
	}
}

func TestRemoveLeavesHandEdits(t *testing.T) {
	merged, _, _ := Merge(nil, []Hook{detectRead, gateStop})
	edited := strings.Replace(string(merged), `"timeout": 600`, `"timeout": 900`, 1)
	out, r, err := Remove([]byte(edited), []Hook{detectRead, gateStop}, []string{"detect", "gate"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Removed) != 1 || r.Removed[0] != "PostToolUse (Read) → detect" {
		t.Errorf("removed %q, want the untouched detect hook only", r.Removed)
	}
	if len(r.Left) != 1 || !strings.Contains(r.Left[0], "hooks.Stop, line ") || !strings.Contains(r.Left[0], "runs gate") {
		t.Errorf("left %q, want the edited Stop group named", r.Left)
	}
	if !strings.Contains(string(out), `"timeout": 900`) || strings.Contains(string(out), "PostToolUse") {
		t.Errorf("out:\n%s", out)
	}
	if _, _, err := Remove([]byte("{\n  \"hooks\": [\n"), nil, nil, nil); err == nil || !strings.Contains(err.Error(), "2:") {
		t.Errorf("not JSON: %v", err)
	}
}

// A group with a status message is gate init's, whatever its text (another
// stopgate version's): Remove takes it, and Merge does not add it twice.
func TestRemoveTakesStatusMessage(t *testing.T) {
	h := gateStop
	h.StatusMessage = "stopgate: checking…"
	merged, _, _ := Merge(nil, []Hook{h})
	if !strings.Contains(string(merged), `"statusMessage": "stopgate: checking…"`) {
		t.Fatalf("merged:\n%s", merged)
	}
	if again, added, _ := Merge(merged, []Hook{h}); len(added) != 0 || string(again) != string(merged) {
		t.Errorf("second Merge added %v", added)
	}
	older := strings.Replace(string(merged), "checking…", "an older text", 1)
	out, r, err := Remove([]byte(older), []Hook{gateStop}, []string{"gate"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Removed) != 1 || len(r.Left) != 0 || strings.Contains(string(out), "Stop") {
		t.Errorf("removed %q, left %q:\n%s", r.Removed, r.Left, out)
	}
}

// A key the client reads only as spelled ("Command" is no command to it)
// makes a group a person's: encoding/json would take it in any case, and
// Remove would cut the person's own "command" with stopgate's.
func TestRemoveKeepsCaseVariantKeys(t *testing.T) {
	merged, _, _ := Merge(nil, []Hook{gateStop})
	for _, edit := range [][2]string{
		{`"command":`, `"command": "say done", "Command":`},
		{`"type": "command",`, `"type": "command", "Type": "command",`},
		{`"hooks": [`, `"matcher": "", "Hooks": [{"type": "command", "command": "say done"}], "hooks": [`},
	} {
		edited := strings.Replace(string(merged), edit[0], edit[1], 1)
		out, r, err := Remove([]byte(edited), []Hook{gateStop}, []string{"gate"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Removed) != 0 || string(out) != edited {
			t.Errorf("%s: removed %q, out:\n%s", edit[1], r.Removed, out)
		}
	}
}
