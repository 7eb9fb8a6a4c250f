package settings

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
)

func TestMergeWall(t *testing.T) {
	deny := []string{"Edit(/mappings.toml)", "Edit(/tmp/validation/**)"}
	tests := []struct {
		name    string
		in      string
		out     string // "" means unchanged
		added   []string
		against []string
	}{{
		name: "empty file",
		in:   "",
		out: `{
  "sandbox": {
    "enabled": true,
    "failIfUnavailable": true,
    "allowUnsandboxedCommands": false
  },
  "permissions": {
    "deny": [
      "Edit(/mappings.toml)",
      "Edit(/tmp/validation/**)"
    ]
  }
}
`,
		added: []string{"sandbox.enabled", "sandbox.failIfUnavailable", "sandbox.allowUnsandboxedCommands", "Edit(/mappings.toml)", "Edit(/tmp/validation/**)"},
	}, {
		name: "existing rules and keys kept, the missing ones appended",
		in: `{
    "model": "opus",
    "sandbox": {"enabled": true},
    "permissions": {
        "allow": ["Bash(ls:*)"],
        "deny": ["Bash(rm:*)", "Edit(/mappings.toml)"]
    }
}
`,
		out: `{
    "model": "opus",
    "sandbox": {"enabled": true, "failIfUnavailable": true, "allowUnsandboxedCommands": false},
    "permissions": {
        "allow": ["Bash(ls:*)"],
        "deny": ["Bash(rm:*)", "Edit(/mappings.toml)", "Edit(/tmp/validation/**)"]
    }
}
`,
		added: []string{"sandbox.failIfUnavailable", "sandbox.allowUnsandboxedCommands", "Edit(/tmp/validation/**)"},
	}, {
		name:  "permissions without deny",
		in:    `{"permissions": {"allow": []}, "sandbox": {"enabled": true, "failIfUnavailable": true, "allowUnsandboxedCommands": false}}`,
		out:   `{"permissions": {"allow": [], "deny": ["Edit(/mappings.toml)", "Edit(/tmp/validation/**)"]}, "sandbox": {"enabled": true, "failIfUnavailable": true, "allowUnsandboxedCommands": false}}`,
		added: []string{"Edit(/mappings.toml)", "Edit(/tmp/validation/**)"},
	}, {
		name: "the user's choice against the wall is kept and reported",
		in: `{
  "sandbox": {
    "enabled": false,
    "failIfUnavailable": true,
    "allowUnsandboxedCommands": true
  },
  "permissions": {
    "deny": [
      "Edit(/mappings.toml)",
      "Edit(/tmp/validation/**)"
    ]
  }
}
`,
		against: []string{
			"sandbox.enabled is false: the agent's Bash runs outside the OS sandbox",
			"sandbox.allowUnsandboxedCommands is true: the agent can ask to run a command outside the sandbox (dangerouslyDisableSandbox)",
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, added, st, err := MergeWall([]byte(tt.in), deny)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.out
			if want == "" {
				want = tt.in
			}
			if string(out) != want {
				t.Errorf("got\n%s\nwant\n%s", out, want)
			}
			if !slices.Equal(added, tt.added) {
				t.Errorf("added %q, want %q", added, tt.added)
			}
			var against []string
			for _, a := range st.Against() {
				against = append(against, a.Text)
			}
			if !slices.Equal(against, tt.against) {
				t.Errorf("against %q, want %q", against, tt.against)
			}
			if !json.Valid(out) {
				t.Errorf("not JSON:\n%s", out)
			}
			again, more, _, err := MergeWall(out, deny)
			if err != nil || len(more) > 0 || string(again) != string(out) {
				t.Errorf("second merge changed the file: added %q, err %v", more, err)
			}
		})
	}
}

func TestMergeWallRefusesMisshapenSettings(t *testing.T) {
	for in, want := range map[string]string{
		`{"sandbox": true}`:                    `1:13: "sandbox" is a boolean, want an object`,
		"{\n  \"permissions\": []\n}":          `2:18: "permissions" is an array, want an object`,
		`{"permissions": {"deny": "Edit(x)"}}`: `1:26: "permissions.deny" is a string, want an array of rules`,
		`{"sandbox": {}`:                       `1:14: unexpected end of JSON input`,
	} {
		_, _, _, err := MergeWall([]byte(in), []string{"Edit(/x)"})
		var se *Error
		if !errors.As(err, &se) || se.Error() != want {
			t.Errorf("%s: got %v, want %s", in, err, want)
		}
	}
}

func TestDenyRule(t *testing.T) {
	for _, tt := range []struct {
		path string
		dir  bool
		want string
	}{
		{"/p/mappings.toml", false, "Edit(/mappings.toml)"},
		{"/p/tmp/validation", true, "Edit(/tmp/validation/**)"},
		{"/home/u/.claude/settings.json", false, "Edit(~/.claude/settings.json)"},
		{"/etc/stopgate/x.toml", false, "Edit(//etc/stopgate/x.toml)"},
		{"/p2/x", false, "Edit(//p2/x)"},
	} {
		if got := DenyRule("/p", "/home/u", tt.path, tt.dir); got != tt.want {
			t.Errorf("DenyRule(%s) = %s, want %s", tt.path, got, tt.want)
		}
	}
}

func TestWalled(t *testing.T) {
	const rule = "Edit(/tmp/validation/**)"
	up := `{"sandbox":{"enabled":true,"failIfUnavailable":true,"allowUnsandboxedCommands":false},"permissions":{"deny":["Edit(/tmp/validation/**)"]}}`
	for _, tc := range []struct {
		name  string
		files []string // user, project, local; "" for none
		want  bool
	}{
		{"none", []string{"", "", ""}, false},
		{"up in the project's", []string{"", up, ""}, true},
		{"up in the user's", []string{up, "", ""}, true},
		{"the local settings take it down", []string{"", up, `{"sandbox":{"enabled":false}}`}, false},
		{"the project's win over the user's", []string{`{"sandbox":{"enabled":false}}`, up, ""}, true},
		{"no deny rule for the state dir", []string{"", `{"sandbox":{"enabled":true,"failIfUnavailable":true,"allowUnsandboxedCommands":false}}`, ""}, false},
		{"the deny rule in the local settings", []string{"", `{"sandbox":{"enabled":true,"failIfUnavailable":true,"allowUnsandboxedCommands":false}}`, `{"permissions":{"deny":["Edit(/tmp/validation/**)"]}}`}, true},
		{"unsandboxed commands allowed", []string{"", up, `{"sandbox":{"allowUnsandboxedCommands":true}}`}, false},
		{"excluded commands", []string{"", up, `{"sandbox":{"excludedCommands":["docker"]}}`}, false},
		{"not JSON", []string{"", up, `{`}, false},
	} {
		var files [][]byte
		for _, f := range tc.files {
			if f == "" {
				files = append(files, nil)
			} else {
				files = append(files, []byte(f))
			}
		}
		if got, why := Walled(files, rule); got != tc.want {
			t.Errorf("%s: walled = %v (%s), want %v", tc.name, got, why, tc.want)
		}
	}
}
