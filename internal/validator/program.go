package validator

// Unrunnable reports why the program a run line starts with cannot run from
// dir, when the line names it by path: missing, a directory, or not
// executable. It returns "" when the program looks runnable, and for
// programs found on $PATH or shell syntax, which only running can judge.
// `gate check` reports with it what the gate would find at stop time.
func Unrunnable(dir, run string) string { return unrunnable(dir, run) }
