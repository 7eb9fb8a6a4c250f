package settings

import "testing"

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
