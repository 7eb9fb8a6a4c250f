package validator

import "strings"

// checkDiff judges a diff check: its failures are the output, one line
// each; a record it cannot use is a Problem, never a pass.
func checkDiff(env Env, s Spec) Result {
	v := s.Diff.Judge(env.Dir, s.Baselines, s.Skip)
	r := Result{Output: strings.Join(v.Fails, "\n"), Problem: v.Problem}
	r.Passed = len(v.Fails) == 0 && v.Problem == ""
	return r
}
