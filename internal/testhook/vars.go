package testhook

import (
	"fmt"
	"regexp"
	"slices"
	"sync"
)

// Variables: a test's save captures group 1 of a regex in its answer, and
// later tests use it as ${name} in their action and expectations. In a
// regex expectation the value is quoted, so it matches literally whatever
// characters it holds. Text that is not ${name} with a valid name, such as
// "$x" or "${1}", is left as written.

// namePattern is a variable's name: a letter or _, then letters, digits
// and _.
const namePattern = `[A-Za-z_][A-Za-z0-9_]*`

// Compiled on first use: testhook starts at every prompt and stop.
var (
	nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^` + namePattern + `$`) })
	refRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{(` + namePattern + `)\}`) }) // group 1 is the name
)

// validName reports whether n can be a variable name.
func validName(n string) bool { return nameRE().MatchString(n) }

// refs returns the names s refers to, in order, repeats included.
func refs(s string) []string {
	var names []string
	for _, m := range refRE().FindAllStringSubmatch(s, -1) {
		names = append(names, m[1])
	}
	return names
}

// substitute replaces each ${name} in s with its value, quoted for a regex
// when quote is set. It returns the names it has no value for, left as
// written.
func substitute(s string, vars map[string]Var, quote bool) (string, []string) {
	var missing []string
	out := refRE().ReplaceAllStringFunc(s, func(ref string) string {
		name := ref[2 : len(ref)-1]
		v, ok := vars[name]
		switch {
		case !ok:
			if !slices.Contains(missing, name) {
				missing = append(missing, name)
			}
			return ref
		case quote:
			return regexp.QuoteMeta(v.Value)
		}
		return v.Value
	})
	return out, missing
}

// capture applies t's saves to answer. It returns the captured values and,
// for each save whose regex does not match, why: a later test needs the
// value, so a missing one fails the test.
func capture(answer string, saves []Save, vars map[string]Var, test string) (map[string]Var, []string) {
	got := map[string]Var{}
	var whys []string
	for _, s := range saves {
		pattern, _ := substitute(s.Regex, vars, true)
		re, err := regexp.Compile(pattern)
		if err != nil {
			whys = append(whys, fmt.Sprintf("cannot save ${%s}: regex %s does not compile: %v", s.Var, pattern, err))
			continue
		}
		m := re.FindStringSubmatch(answer)
		if len(m) < 2 {
			whys = append(whys, fmt.Sprintf("cannot save ${%s}: no match for regex %s", s.Var, pattern))
			continue
		}
		got[s.Var] = Var{Value: m[1], Test: test}
	}
	return got, whys
}
