package settings

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

var (
	detectRead = Hook{Event: "PostToolUse", Matcher: "Read", Command: `"$CLAUDE_PROJECT_DIR"/bin/detect`, Timeout: 10}
	gateStop   = Hook{Event: "Stop", Command: `"$CLAUDE_PROJECT_DIR"/bin/gate`, Timeout: 600}
	guard      = Hook{Event: "PreToolUse", Matcher: "Write|Edit|Bash", Command: `"$CLAUDE_PROJECT_DIR"/bin/detect`}
)

func TestMerge(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		want  []Hook
		out   string // "" means unchanged
		added []string
	}{{
		name: "empty file",
		in:   "",
		want: []Hook{detectRead, gateStop},
		out: `{
  "hooks": {
    "PostToolUse": [
      {
        "matcher": "Read",
        "hooks": [
          {
            "type": "command",
            "command": "\"$CLAUDE_PROJECT_DIR\"/bin/detect",
            "timeout": 10
          }
        ]
      }
    ],
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "\"$CLAUDE_PROJECT_DIR\"/bin/gate",
            "timeout": 600
          }
        ]
      }
    ]
  }
}
`,
		added: []string{"PostToolUse (Read) → detect", "Stop → gate"},
	}, {
		name: "other settings and hooks kept, four-space indent followed",
		in: `{
    "model": "opus",
    "hooks": {
        "Stop": [
            {"hooks": [{"type": "command", "command": "make lint"}]}
        ]
    },
    "env": {"A": "1"}
}
`,
		want: []Hook{gateStop},
		out: `{
    "model": "opus",
    "hooks": {
        "Stop": [
            {"hooks": [{"type": "command", "command": "make lint"}]},
            {
                "hooks": [
                    {
                        "type": "command",
                        "command": "\"$CLAUDE_PROJECT_DIR\"/bin/gate",
                        "timeout": 600
                    }
                ]
            }
        ]
    },
    "env": {"A": "1"}
}
`,
		added: []string{"Stop → gate"},
	}, {
		name:  "compact file stays compact",
		in:    `{"model":"opus","hooks":{"Stop":[]}}`,
		want:  []Hook{gateStop, detectRead},
		out:   `{"model":"opus","hooks":{"Stop":[{"hooks":[{"type":"command","command":"\"$CLAUDE_PROJECT_DIR\"/bin/gate","timeout":600}]}],"PostToolUse":[{"matcher":"Read","hooks":[{"type":"command","command":"\"$CLAUDE_PROJECT_DIR\"/bin/detect","timeout":10}]}]}}`,
		added: []string{"Stop → gate", "PostToolUse (Read) → detect"},
	}, {
		name: "tabs and an empty hooks object",
		in:   "{\n\t\"hooks\": {}\n}",
		want: []Hook{gateStop},
		out: "{\n\t\"hooks\": {\n\t\t\"Stop\": [\n\t\t\t{\n\t\t\t\t\"hooks\": [\n\t\t\t\t\t{\n\t\t\t\t\t\t\"type\": \"command\",\n" +
			"\t\t\t\t\t\t\"command\": \"\\\"$CLAUDE_PROJECT_DIR\\\"/bin/gate\",\n\t\t\t\t\t\t\"timeout\": 600\n\t\t\t\t\t}\n\t\t\t\t]\n\t\t\t}\n\t\t]\n\t}\n}",
		added: []string{"Stop → gate"},
	}, {
		name:  "registered already, under another path and with arguments",
		in:    `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"/usr/local/bin/gate --config ci.toml","timeout":30}]}]}}`,
		want:  []Hook{gateStop},
		added: nil,
	}, {
		name:  "a wildcard matcher covers Read",
		in:    `{"hooks":{"PostToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"bin/detect"}]}]}}`,
		want:  []Hook{detectRead},
		added: nil,
	}, {
		name:  "a matcher for some tools: the rest are added",
		in:    `{"hooks":{"PreToolUse":[{"matcher":"Edit|Write","hooks":[{"type":"command","command":"bin/detect"}]}]}}`,
		want:  []Hook{guard},
		out:   `{"hooks":{"PreToolUse":[{"matcher":"Edit|Write","hooks":[{"type":"command","command":"bin/detect"}]},{"matcher":"Bash","hooks":[{"type":"command","command":"\"$CLAUDE_PROJECT_DIR\"/bin/detect"}]}]}}`,
		added: []string{"PreToolUse (Bash) → detect"},
	}, {
		name:  "another program on the same event does not count",
		in:    `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "bin/gatekeeper"}]}]}}`,
		want:  []Hook{gateStop},
		out:   `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "bin/gatekeeper"}]}, {"hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/bin/gate", "timeout": 600}]}]}}`,
		added: []string{"Stop → gate"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, added, err := Merge([]byte(tt.in), tt.want)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.out
			if want == "" {
				want = tt.in
			}
			if string(out) != want {
				t.Errorf("Merge:\n%s\nwant:\n%s", out, want)
			}
			var names []string
			for _, h := range added {
				names = append(names, h.String())
			}
			if strings.Join(names, "; ") != strings.Join(tt.added, "; ") {
				t.Errorf("added %q, want %q", names, tt.added)
			}
			if !json.Valid(out) {
				t.Fatalf("Merge wrote invalid JSON:\n%s", out)
			}
			again, added, err := Merge(out, tt.want)
			if err != nil || len(added) != 0 || string(again) != string(out) {
				t.Errorf("second Merge changed the file (added %v, err %v):\n%s", added, err, again)
			}
			found, err := Parse(out).Lookup(tt.want)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range found {
				if !f.Registered || f.Line == 0 {
					t.Errorf("after Merge, Lookup says %v is not registered (%+v)", f.Hook, f)
				}
			}
		})
	}
}

func TestMergeRefuses(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"not JSON", "{\n  \"hooks\": {\n    \"Stop\": [,]\n  }\n}\n", "3:14: invalid character ',' looking for beginning of value"},
		{"trailing comma", "{\"a\": 1,}", "1:9: invalid character '}' looking for beginning of object key string"},
		{"cut short", "{\"hooks\": {", "1:11: unexpected end of JSON input"},
		{"comment", "{\n  // mine\n}", "2:3: invalid character '/' looking for beginning of object key string"},
		{"top level array", "[]", `1:1: settings is an array, want an object`},
		{"hooks is an array", "{\n  \"hooks\": []\n}", `2:12: "hooks" is an array, want an object of event names`},
		{"event is an object", `{"hooks": {"Stop": {}}}`, `1:20: hooks.Stop is an object, want an array of matcher groups`},
		{"hooks is null", `{"hooks": null}`, `1:11: "hooks" is null, want an object of event names`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := Merge([]byte(tt.in), []Hook{gateStop})
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Merge = %q, %v; want an *Error", out, err)
			}
			if err.Error() != tt.want {
				t.Errorf("error %q\nwant  %q", err, tt.want)
			}
		})
	}
}

func TestLookup(t *testing.T) {
	in := `{
  "hooks": {
    "Stop": [
      {"hooks": [{"type": "command", "command": "make lint"}]},
      {"hooks": [
        {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/bin/gate", "timeout": 45}
      ]}
    ]
  }
}`
	found, err := Parse([]byte(in)).Lookup([]Hook{gateStop, detectRead})
	if err != nil {
		t.Fatal(err)
	}
	if f := found[0]; !f.Registered || f.Timeout != 45 || f.Line != 6 || f.Command != `"$CLAUDE_PROJECT_DIR"/bin/gate` {
		t.Errorf("gate: %+v, want registered on line 6 with timeout 45", f)
	}
	if f := found[1]; f.Registered || f.Uncovered != "Read" || f.Line != 0 {
		t.Errorf("detect: %+v, want not registered", f)
	}
}

func TestProgram(t *testing.T) {
	for cmd, want := range map[string]string{
		`"$CLAUDE_PROJECT_DIR"/bin/detect`:      "detect",
		`"${CLAUDE_PLUGIN_ROOT}"/bin/gate`:      "gate",
		`/usr/local/bin/gate --config ci.toml`:  "gate",
		`'/opt/my tools/gate'`:                  "gate",
		`  gate`:                                "gate",
		`/opt/my\ tools/testhook;echo done`:     "testhook",
		`"$CLAUDE_PROJECT_DIR/bin/detect" && x`: "detect",
	} {
		if got := Program(cmd); got != want {
			t.Errorf("Program(%q) = %q, want %q", cmd, got, want)
		}
	}
}

func TestDocDisablesHooks(t *testing.T) {
	for in, want := range map[string]bool{
		`{"disableAllHooks": true}`:                           true,
		`{"disableAllHooks": "yes"}`:                          true,
		`{"disableAllHooks": null}`:                           true,
		`{"disableAllHooks": false}`:                          false,
		`{"disableAllHooks": true, "disableAllHooks": false}`: false, // the last counts, as for the client
		`{}`:   false,
		``:     false,
		`[1]`:  false,
		`{"a"`: false, // not JSON: hookFindings reports it
	} {
		if got := Parse([]byte(in)).DisablesHooks(); got != want {
			t.Errorf("%q: DisablesHooks = %v, want %v", in, got, want)
		}
	}
}
