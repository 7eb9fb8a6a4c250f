package testhook

import (
	"errors"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/validator"
)

// FuzzParseTests: whatever a tests file holds, read as JSON and as TOML,
// Parse never panics; every error is Problems naming the file, a line
// inside it (or none) and a one-line message; and a suite that loads is
// one the runner can run: ids unique and usable, actions present,
// expectations and saves that compile, every ${var} saved by an earlier
// test. Seeds: testdata/fuzz/FuzzParseTests.
func FuzzParseTests(f *testing.F) {
	f.Add([]byte(`{"version":"1","tests":[{"id":"a","action":"x","expect":[{"contains":"ok"}],"save":{"t":"t=(\\w+)"}},{"id":"b","action":"use ${t}"}]}`))
	f.Add([]byte("[[test]]\nid = \"a\"\naction = \"x\"\nsave = { t = '(\\w+)' }\n[[test]]\nid = \"b\"\naction = \"${t}\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, name := range []string{"tests.json", "tests.toml"} {
			s, err := Parse(data, "/p/tests/"+name, "/p")
			if err != nil {
				checkTestProblems(t, name, data, err)
				continue
			}
			checkSuite(t, data, s)
		}
	})
}

func checkTestProblems(t *testing.T, name string, data []byte, err error) {
	var ps config.Problems
	if !errors.As(err, &ps) || len(ps) == 0 {
		t.Fatalf("%s: error is not Problems: %T %v", name, err, err)
	}
	n := strings.Count(string(data), "\n") + 1
	for _, p := range ps {
		if p.File != "tests/"+name {
			t.Fatalf("problem names file %q, want tests/%s: %s", p.File, name, p.Error())
		}
		if p.Line < 0 || p.Line > n {
			t.Fatalf("line %d outside the file's %d lines: %s", p.Line, n, p.Error())
		}
		if p.Msg == "" || strings.ContainsAny(p.Error(), "\r\n") {
			t.Fatalf("problem is not one line: %q", p.Error())
		}
	}
}

func checkSuite(t *testing.T, data []byte, s *Suite) {
	if len(s.Tests) == 0 {
		t.Fatalf("a suite without tests loaded")
	}
	n := strings.Count(string(data), "\n") + 1
	ids := map[string]bool{}
	saved := map[string]bool{}
	for _, tt := range s.Tests {
		switch {
		case strings.TrimSpace(tt.ID) == "" || strings.ContainsAny(tt.ID, "\r\n"):
			t.Fatalf("test loaded with id %q", tt.ID)
		case ids[tt.ID]:
			t.Fatalf("id %q loaded twice", tt.ID)
		case strings.TrimSpace(tt.Action) == "":
			t.Fatalf("test %q loaded without an action", tt.ID)
		case tt.Category == "":
			t.Fatalf("test %q without a category", tt.ID)
		case tt.Line < 0 || tt.Line > n:
			t.Fatalf("test %q at line %d of %d", tt.ID, tt.Line, n)
		}
		ids[tt.ID] = true
		for _, x := range tt.Expect {
			if _, err := validator.NewExpectation(x.Kind, blankRefs(x.Pattern)); err != nil {
				t.Fatalf("test %q: expectation loaded that cannot be checked: %v", tt.ID, err)
			}
		}
		if !sort.SliceIsSorted(tt.Save, func(i, j int) bool { return tt.Save[i].Var < tt.Save[j].Var }) {
			t.Fatalf("test %q: saves not sorted: %v", tt.ID, tt.Save)
		}
		for _, sv := range tt.Save {
			re, err := regexp.Compile(blankRefs(sv.Regex))
			if !validName(sv.Var) || err != nil || re.NumSubexp() < 1 {
				t.Fatalf("test %q: save %q = %q loaded but cannot capture", tt.ID, sv.Var, sv.Regex)
			}
		}
		for _, r := range tt.refs() {
			if !saved[r] {
				t.Fatalf("test %q uses ${%s}, which no earlier test saves", tt.ID, r)
			}
		}
		for _, sv := range tt.Save {
			saved[sv.Var] = true
		}
	}
}
