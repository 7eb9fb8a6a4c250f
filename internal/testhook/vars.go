package testhook

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Variables: a test's save captures group 1 of a regex in its answer, and
// later tests use it as ${name} in their action and expectations. In a
// regex expectation the value is quoted, so it matches literally whatever
// characters it holds. Text that is not ${name} with a valid name, such as
// "$x" or "${1}", is left as written.

// validName reports whether n can be a variable name: a letter or _, then
// letters, digits and _.
func validName(n string) bool {
	if n == "" {
		return false
	}
	for i, c := range n {
		if !(c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// scanRefs calls f with the start, end and name of each ${name} in s.
func scanRefs(s string, f func(start, end int, name string)) {
	for i := 0; i < len(s); {
		j := strings.Index(s[i:], "${")
		if j < 0 {
			return
		}
		start := i + j
		k := strings.IndexByte(s[start+2:], '}')
		if k < 0 {
			return
		}
		end := start + 2 + k + 1
		if name := s[start+2 : end-1]; validName(name) {
			f(start, end, name)
			i = end
		} else {
			i = start + 2
		}
	}
}

// refs returns the names s refers to, in order, repeats included.
func refs(s string) []string {
	var names []string
	scanRefs(s, func(_, _ int, name string) { names = append(names, name) })
	return names
}

// substitute replaces each ${name} in s with its value, quoted for a regex
// when quote is set. It returns the names it has no value for, left as
// written.
func substitute(s string, vars map[string]Var, quote bool) (string, []string) {
	var b strings.Builder
	var missing []string
	last := 0
	scanRefs(s, func(start, end int, name string) {
		v, ok := vars[name]
		if !ok {
			if !slices.Contains(missing, name) {
				missing = append(missing, name)
			}
			return
		}
		b.WriteString(s[last:start])
		if quote {
			b.WriteString(regexp.QuoteMeta(v.Value))
		} else {
			b.WriteString(v.Value)
		}
		last = end
	})
	if last == 0 {
		return s, missing
	}
	b.WriteString(s[last:])
	return b.String(), missing
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
