package testhook

import (
	"fmt"
	"slices"

	"github.com/stopgate/stopgate/internal/validator"
)

// Suite is a loaded tests file.
type Suite struct {
	File        string // as shown to a person: relative to the project root when inside it
	Version     string
	Description string
	Tests       []Test
}

// Test is one test: an action handed to the agent, and what its answer
// must meet. It is also the plan's entry in a run's state, so it has JSON
// tags of its own.
type Test struct {
	ID          string   `json:"id"`
	Description string   `json:"description,omitempty"`
	Category    string   `json:"category"`
	Action      string   `json:"action"`
	Expect      []Expect `json:"expect,omitempty"`
	Save        []Save   `json:"save,omitempty"` // sorted by Var
	Tags        []string `json:"tags,omitempty"`
	Line        int      `json:"line,omitempty"` // in the tests file; 0 when unknown
}

// Expect is one expectation on the answer, before ${var} substitution.
type Expect struct {
	Kind    validator.Kind `json:"kind"`
	Pattern string         `json:"pattern"`
}

// Save captures group 1 of Regex in the answer as ${Var}.
type Save struct {
	Var   string `json:"var"`
	Regex string `json:"regex"`
}

// DefaultCategory is the category of a test that names none.
const DefaultCategory = "general"

// refs returns the ${var} names t uses, in order of first use.
func (t *Test) refs() []string {
	var names []string
	add := func(s string) {
		for _, n := range refs(s) {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	add(t.Action)
	for _, x := range t.Expect {
		add(x.Pattern)
	}
	for _, s := range t.Save {
		add(s.Regex)
	}
	return names
}

// saverOf returns the index of the first of tests that saves name, or -1.
func saverOf(tests []Test, name string) int {
	return slices.IndexFunc(tests, func(t Test) bool {
		return slices.ContainsFunc(t.Save, func(s Save) bool { return s.Var == name })
	})
}

// unsaved calls f with each ${name} that tests[i] uses and no test before
// it saves: tests run in order, so the value could not be there.
func unsaved(tests []Test, f func(i int, name string)) {
	saved := map[string]bool{}
	for i := range tests {
		for _, n := range tests[i].refs() {
			if !saved[n] {
				f(i, n)
			}
		}
		for _, s := range tests[i].Save {
			saved[s.Var] = true
		}
	}
}

// testKey is the Key of a problem in test id: test "id". A mistake in a
// tests file is a config.Problem with the test named in Key ("test login",
// "test #2"), so that both files' mistakes read, wrap and print alike.
func testKey(id string) string { return fmt.Sprintf("test %q", id) }
