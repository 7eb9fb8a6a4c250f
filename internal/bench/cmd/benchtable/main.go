// Command benchtable measures stopgate's built commands as whole processes,
// the way Claude Code pays for them, and prints one table: detect, gate and
// testhook beside a hello-world Go binary built in the same run (the floor),
// the gate's parallelism over validators that sleep, and the enqueue
// throughput of concurrent detect processes. `make bench` runs it after
// building; docs/benchmarks.md explains the table.
//
// Usage: go run ./internal/bench/cmd/benchtable [-bin bin] [-runs 50] …
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/stopgate/stopgate/internal/bench"
	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/example"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "benchtable: %v\n", err)
		os.Exit(1)
	}
}

type options struct {
	bin, repo, dir, gocmd  string
	before                 string         // the gate of the build to compare with, or ""
	only                   *regexp.Regexp // nil: every row
	runs, warmup, gateRuns int
	coldRuns, jobs         int
	sizes                  []int
	progress               io.Writer
	tmp                    string
	detect, gate, th       string
	cleanups               []func()
}

func run(args []string, stdout, stderr io.Writer) error {
	o := &options{progress: stderr, sizes: []int{10, 1000, 10000}}
	fl := flag.NewFlagSet("benchtable", flag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.StringVar(&o.bin, "bin", "bin", "directory of the built commands")
	fl.StringVar(&o.repo, "repo", ".", "repository root (its example project feeds testhook)")
	fl.StringVar(&o.dir, "dir", "", "where to generate projects (default: the temp dir)")
	fl.StringVar(&o.gocmd, "go", "go", "the go command that built the commands, to build the floor")
	fl.IntVar(&o.runs, "runs", 50, "measured runs per whole-process case (at least 30)")
	fl.IntVar(&o.warmup, "warmup", 5, "unmeasured runs before them")
	fl.IntVar(&o.gateRuns, "gate-runs", 10, "measured runs per gate parallelism case")
	fl.IntVar(&o.coldRuns, "cold-runs", 5, "measured runs per cold-cache case")
	fl.IntVar(&o.jobs, "jobs", 256, "enqueues per throughput case")
	before := fl.String("before", "", "directory of another build's commands: its detect's unmatched Read rows and its gate's parallelism rows are measured in the same rounds")
	only := fl.String("only", "", "measure only the rows whose name matches this `regexp`, beside their baselines")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *only != "" {
		re, err := regexp.Compile(*only)
		if err != nil {
			return fmt.Errorf("-only: %w", err)
		}
		o.only = re
	}
	if *before != "" {
		p, err := filepath.Abs(filepath.Join(*before, "gate"))
		if err != nil {
			return err
		}
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("-before: %w", err)
		}
		if err := settle(p, filepath.Join(filepath.Dir(p), "detect")); err != nil { // as its own build's are
			return fmt.Errorf("-before: %w", err)
		}
		o.before = p
	}
	if o.runs < 30 {
		return fmt.Errorf("-runs %d: a median needs at least 30 runs", o.runs)
	}
	var err error
	if o.tmp, err = os.MkdirTemp(o.dir, "stopgate-bench-"); err != nil {
		return err
	}
	defer os.RemoveAll(o.tmp)
	defer func() {
		for _, f := range o.cleanups {
			f()
		}
	}()
	for _, b := range []struct {
		path *string
		name string
	}{{&o.detect, "detect"}, {&o.gate, "gate"}, {&o.th, "testhook"}} {
		p, err := filepath.Abs(filepath.Join(o.bin, b.name))
		if err != nil {
			return err
		}
		if _, err := os.Stat(p); err != nil {
			if b.name == "testhook" && errors.Is(err, fs.ErrNotExist) {
				continue // not built yet: its rows say so
			}
			return fmt.Errorf("%w (run make build first)", err)
		}
		if err := settle(p); err != nil {
			return err
		}
		*b.path = p
	}

	var t bench.Table
	t.Header = []string{"measurement", "runs", "median", "p90", "baseline", "result"}
	t.Right = []bool{false, true, true, true, false, true}
	machine := bench.Machine(o.tmp)
	start := time.Now()
	for _, measure := range []func(*bench.Table) error{o.processes, o.parallelism, o.throughput, o.telemetry, o.reuse, o.fingerprints} {
		if err := measure(&t); err != nil {
			return err
		}
	}

	fmt.Fprintf(stdout, "stopgate benchmarks, %s\n", start.UTC().Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(stdout, "machine: %s\n", machine)
	fmt.Fprintf(stdout, "load average after the run: %s; took %s\n\n", bench.Load(), time.Since(start).Round(time.Second))
	return t.Write(stdout)
}

// wants reports whether the row called name is to be measured.
func (o *options) wants(name string) bool { return o.only == nil || o.only.MatchString(name) }

// wanted returns the cases that are to be measured, in a slice of its own.
func (o *options) wanted(cases []bench.Case) []bench.Case {
	return slices.DeleteFunc(slices.Clone(cases), func(c bench.Case) bool { return !o.wants(c.Name) })
}

func (o *options) logf(format string, args ...any) {
	fmt.Fprintf(o.progress, "benchtable: "+format+"\n", args...)
}

func (o *options) env(root string) []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	if root != "" {
		env = append(env, "CLAUDE_PROJECT_DIR="+root)
	}
	return env
}

// spawnSource is the floor of the gate's parallelism: a bare Go program
// that starts N `sh -c 'sleep 0.2'` at once, each in its own process group
// as the gate starts validators, and waits for them. On a machine of few
// cores, starting 2N programs costs time of its own, whoever starts them;
// the gate's overhead is what it adds over this.
const spawnSource = `package main

import (
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
)

func main() {
	n, _ := strconv.Atoi(os.Args[1])
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			c := exec.Command("sh", "-c", "sleep 0.2")
			c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			c.Run()
		})
	}
	wg.Wait()
}
`

// buildFloor compiles a one-file program by the same Go as stopgate.
func buildFloor(gocmd, dir, name, source string) (string, error) {
	src := filepath.Join(dir, name)
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	files := map[string]string{
		"go.mod":  "module " + name + "\n\ngo 1.26\n",
		"main.go": source,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(src, name), []byte(text), 0o644); err != nil {
			return "", err
		}
	}
	out := filepath.Join(src, name)
	cmd := exec.Command(gocmd, "build", "-o", out, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s: %w: %s", name, err, msg)
	}
	return out, settle(out)
}

// settle rewrites each program by a plain copy, so that every program
// timed starts from the same page cache: one the linker just wrote
// starts slower until its pages are evicted (docs/architecture.md), and
// the routes that copy their programs would be timed against a floor left
// as the linker wrote it.
func settle(paths ...string) error {
	for _, p := range paths {
		if err := copyFile(p, p+".settle"); err != nil {
			return err
		}
		if err := os.Rename(p+".settle", p); err != nil {
			return err
		}
	}
	return nil
}

// shFloorName is the row of sh -c running the hello world, the floor of
// a registered hook command: the registered rows give both ratios.
const shFloorName = "sh -c floor (sh -c running the hello world)"

// processes measures every command beside the floor, the standard
// library's hello world built by the same Go, interleaved.
func (o *options) processes(t *bench.Table) error {
	o.logf("building the hello-world floor")
	hello, err := buildFloor(o.gocmd, o.tmp, "hello", "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello, world\") }\n")
	if err != nil {
		return err
	}
	var projects []*bench.Project
	for _, n := range o.sizes {
		p, err := bench.WriteProject(filepath.Join(o.tmp, fmt.Sprintf("mappings-%d", n)), n)
		if err != nil {
			return err
		}
		projects = append(projects, p)
	}
	example, err := o.exampleProject()
	if err != nil {
		return err
	}
	before, err := o.beforeCases()
	if err != nil {
		return err
	}
	diff, err := bench.WriteDiffProject(filepath.Join(o.tmp, "diff"), 1000, 200)
	if err != nil {
		return err
	}
	registered, err := o.registrationCases(o.sizes[0])
	if err != nil {
		return err
	}
	cases := append(o.projectCases(projects), before...)
	cases = append(cases,
		bench.Case{Name: "detect, matched Read with diff checks (first in its session), 1,000 mappings, 200 test files", Cmd: o.matched(diff)},
		bench.Case{Name: "detect, matched Read with diff checks again (re-arm), 1,000 mappings, 200 test files", Cmd: o.rearm(diff)})
	cases = append(cases, registered...)
	cases = append(cases, o.testhookCases(example)...)
	cases = append(cases, o.guardCases(example)...)
	floor := bench.Case{Name: "hello-world floor (stdlib Go)", Cmd: &bench.Cmd{Path: hello, Env: o.env("")}}
	// The registered hooks' floor: a client always starts a shell, so the
	// least a registered command costs is sh -c running a Go program.
	shFloor := bench.Case{Name: shFloorName, Cmd: &bench.Cmd{Path: "/bin/sh", Args: []string{"-c", cli.ShellQuote(hello)}, Env: o.env("")}}
	cases = append([]bench.Case{floor, shFloor}, o.wanted(cases)...) // the floors, always

	o.logf("measuring %d commands, %d+%d runs each, interleaved", len(cases), o.warmup, o.runs)
	series := bench.Interleave(cases, o.warmup, o.runs)
	if series[0].Err != nil {
		return series[0].Err
	}
	rows(t, series, "hello-world floor", "1.00×", func(s, base bench.Series) string {
		if strings.HasPrefix(s.Name, "registered as") {
			return ratio(s, base) + " / " + ratio(s, series[1]) + " sh -c"
		}
		return ratio(s, base)
	})

	// The worst case: the first event after mappings.toml changed parses
	// it: detect's runs with its cache removed before each.
	var cold []bench.Case
	for _, p := range projects[1:] {
		c := o.unmatched(o.detect, p)
		c.Before = func(int) error { return os.RemoveAll(filepath.Join(p.Dir, "tmp", "validation", "cache")) }
		cold = append(cold, bench.Case{Name: fmt.Sprintf("detect, unmatched Read, %s mappings, cache cold", count(p.Mappings)), Cmd: c})
	}
	if cold = o.wanted(cold); len(cold) == 0 {
		return nil
	}
	o.logf("measuring cold caches, %d runs each", o.coldRuns)
	for _, s := range bench.Interleave(cold, 1, o.coldRuns) {
		row(t, s, "hello-world floor", ratio(s, series[0]))
	}
	return nil
}

// beforeCases are, with -before, that build's detect on an unmatched Read,
// on projects of its own: each build keeps its own config cache, and two
// sharing a project would rewrite it at every run.
func (o *options) beforeCases() ([]bench.Case, error) {
	if o.before == "" {
		return nil, nil
	}
	var cases []bench.Case
	for _, n := range o.sizes {
		p, err := bench.WriteProject(filepath.Join(o.tmp, fmt.Sprintf("before-mappings-%d", n)), n)
		if err != nil {
			return nil, err
		}
		cases = append(cases, bench.Case{Name: fmt.Sprintf("detect before, unmatched Read, %s mappings", count(p.Mappings)),
			Cmd: o.unmatched(filepath.Join(filepath.Dir(o.before), "detect"), p)})
	}
	return cases, nil
}

// projectCases are the hook runs measured on the generated projects of
// each size: detect on an unmatched and a matched Read, and an empty stop.
func (o *options) projectCases(projects []*bench.Project) []bench.Case {
	var cases []bench.Case
	for _, kind := range []struct {
		name string
		cmd  func(*bench.Project) *bench.Cmd
	}{
		{"detect, unmatched Read", func(p *bench.Project) *bench.Cmd { return o.unmatched(o.detect, p) }},
		{"detect, matched Read (first in its session)", o.matched},
		{"detect, matched Read again (re-arm)", o.rearm},
		{"gate, empty queue", func(p *bench.Project) *bench.Cmd {
			return o.hook(o.gate, p.Dir, func(int) []byte { return bench.StopEvent(p.Dir, "bench-empty") }, silent)
		}},
	} {
		for _, p := range projects {
			cases = append(cases, bench.Case{Name: fmt.Sprintf("%s, %s mappings", kind.name, count(p.Mappings)), Cmd: kind.cmd(p)})
		}
	}
	return cases
}

// hook is a run of the program at path in the project at dir, fed stdin
// and judged by check.
func (o *options) hook(path, dir string, stdin func(int) []byte, check func(int, []byte) error) *bench.Cmd {
	return &bench.Cmd{Path: path, Dir: dir, Env: o.env(dir), Stdin: stdin, Check: check}
}

// unmatched is detect (of this build or another) on a Read of p that no
// mapping names.
func (o *options) unmatched(detect string, p *bench.Project) *bench.Cmd {
	return o.hook(detect, p.Dir, func(int) []byte { return p.Unmatched("bench-unmatched") }, silent)
}

// matched is detect on the first Read of p's prompt in a new session each
// run, which writes an entry and announces its checks (and, with diff
// checks, records the files they name).
func (o *options) matched(p *bench.Project) *bench.Cmd {
	return o.hook(o.detect, p.Dir, func(i int) []byte { return p.Matched(fmt.Sprintf("bench-matched-%d", i)) }, contains("additionalContext"))
}

// rearm is detect on a Read of p's prompt in the same session each run:
// after the first, the entry exists, so the read rewrites it and announces
// nothing.
func (o *options) rearm(p *bench.Project) *bench.Cmd {
	return o.hook(o.detect, p.Dir, func(int) []byte { return p.Matched("bench-rearm") }, func(i int, out []byte) error {
		if i == 0 {
			return contains("additionalContext")(i, out)
		}
		return silent(i, out)
	})
}

// armedStop is gate stopping session(i) of a work project, armed by
// detect before each run.
func (o *options) armedStop(gate string, p *bench.Project, session func(int) string, check func(int, []byte) error) *bench.Cmd {
	arm := o.hook(o.detect, p.Dir, func(i int) []byte { return bench.ReadEvent(p.Dir, session(i), p.WorkPrompt()) }, contains("additionalContext"))
	c := o.hook(gate, p.Dir, func(i int) []byte { return bench.StopEvent(p.Dir, session(i)) }, check)
	c.Before = func(i int) error { _, err := arm.Run(i); return err }
	return c
}

// row adds s to t: its times, or why it was not measured.
func row(t *bench.Table, s bench.Series, baseline, result string) {
	if s.Err != nil {
		t.Add(s.Name, "–", "–", "–", "–", "not measured: "+s.Err.Error())
		return
	}
	t.Add(s.Name, fmt.Sprint(len(s.Times)), bench.Ms(s.Median()), bench.Ms(s.P90()), baseline, result)
}

// rows adds series to t, the first the baseline of the others: its result
// is self, theirs result against it.
func rows(t *bench.Table, series []bench.Series, baseline, self string, result func(s, base bench.Series) string) {
	for i, s := range series {
		if i == 0 {
			row(t, s, "–", self)
		} else {
			row(t, s, baseline, result(s, series[0]))
		}
	}
}

// ratio is s's median over base's.
func ratio(s, base bench.Series) string { return bench.Ratio(s.Median(), base.Median()) }

// delta is what s's median adds to base's, or "–" when base has none.
func delta(s, base bench.Series) string {
	if base.Err != nil || len(base.Times) == 0 {
		return "–"
	}
	return fmt.Sprintf("%+.1f ms", float64(s.Median()-base.Median())/float64(time.Millisecond))
}

// exampleProject copies the repository's example project, with its tests
// file, for testhook, and starts a run there for `testhook next`.
func (o *options) exampleProject() (string, error) {
	dir := filepath.Join(o.tmp, "example")
	err := example.Copy(o.repo, dir)
	if err == nil {
		err = example.CopyTree(filepath.Join(o.repo, "tests/functional"), filepath.Join(dir, "tests/functional"))
	}
	if err != nil {
		return "", fmt.Errorf("copying the example project: %w", err)
	}
	return dir, nil
}

// guardCases are detect's tamper guard on the example project: a typical
// Bash call, a pipeline with a branch and a substitution (dry-run twice),
// and a write through a shell function, denied.
func (o *options) guardCases(example string) []bench.Case {
	bash := func(name, command string, check func(int, []byte) error) bench.Case {
		return bench.Case{Name: "detect, guard: Bash " + name, Cmd: o.hook(o.detect, example, func(int) []byte {
			return bench.ToolEvent(example, "bench-guard", "Bash", map[string]any{"command": command})
		}, check)}
	}
	return []bench.Case{
		bash("`go test ./...`", "go test ./...", silent),
		bash("pipeline", `git diff --stat | grep -v vendor | sort -k2 > output/stat.txt && echo "done: $(date)"`, silent),
		bash("function writing mappings.toml, denied", `f(){ : > "$1"; }; f mappings.toml`, contains(`"permissionDecision":"deny"`)),
	}
}

func (o *options) testhookCases(example string) []bench.Case {
	if o.th == "" {
		return []bench.Case{
			{Name: "testhook, non-runner prompt", Cmd: missing("bin/testhook is not built")},
			{Name: "testhook next", Cmd: missing("bin/testhook is not built")},
		}
	}
	next := o.hook(o.th, example, nil, nonEmpty)
	next.Args = []string{"next"}
	init := exec.Command(o.th, "init")
	init.Dir, init.Env = example, o.env(example)
	if msg, err := init.CombinedOutput(); err != nil {
		next = missing(fmt.Sprintf("testhook init: %v: %s", err, bytes.TrimSpace(msg)))
	}
	return []bench.Case{
		{Name: "testhook, non-runner prompt", Cmd: o.hook(o.th, example, func(int) []byte {
			return bench.PromptEvent(example, "bench-prompt", "Tidy up the README, then run the tests.")
		}, silent)},
		{Name: "testhook next", Cmd: next},
	}
}

// missing is a case that cannot run, and says why.
func missing(why string) *bench.Cmd {
	return &bench.Cmd{Before: func(int) error { return errors.New(why) }}
}

// parallelism times the gate on validators that each sleep 0.2 s, confined
// (one sandbox per stop) and not, beside one such validator run alone (the
// issue's baseline), and beside a bare Go program starting as many at once
// (the spawn floor): the difference from the floor is what the gate itself
// adds, and a confined row's difference from its unconfined twin is what
// the sandbox costs. With -before, the gate of that build is measured in
// the same rounds, in rows of its own.
func (o *options) parallelism(t *bench.Table) error {
	spawn, err := buildFloor(o.gocmd, o.tmp, "spawnfloor", spawnSource)
	if err != nil {
		return err
	}
	cases := []bench.Case{{Name: "one validator alone: sh -c 'sleep 0.2'", Cmd: &bench.Cmd{Path: "/bin/sh", Args: []string{"-c", "sleep 0.2"}, Env: o.env("")}}}
	floors := map[string]int{} // gate case → its spawn floor's place in cases
	gates := [][2]string{{"gate", o.gate}}
	if o.before != "" {
		gates = append(gates, [2]string{"gate before", o.before})
	}
	for _, n := range []int{1, 4, 16, 64} {
		floor := 0 // not added yet
		for _, g := range gates {
			for _, how := range []string{"unconfined", "confined"} {
				name := fmt.Sprintf("%s, %d validator(s) × sleep 0.2, %s", g[0], n, how)
				if !o.wants(name) {
					continue
				}
				if floor == 0 {
					floor = len(cases)
					cases = append(cases, bench.Case{Name: fmt.Sprintf("spawn floor, %d × sleep 0.2 from a bare Go program", n),
						Cmd: &bench.Cmd{Path: spawn, Args: []string{fmt.Sprint(n)}, Env: o.env("")}})
				}
				floors[name] = floor
				p, err := bench.WriteSleepProject(filepath.Join(o.tmp, fmt.Sprintf("sleep-%d-%s-%s", n, strings.ReplaceAll(g[0], " ", "-"), how)), n, "0.2", how == "confined")
				if err != nil {
					return err
				}
				cases = append(cases, bench.Case{Name: name, Cmd: o.armedStop(g[1], p, func(int) string { return "bench-sleep" }, silent)})
			}
		}
	}
	if len(cases) == 1 {
		return nil
	}
	o.logf("measuring the gate's parallelism, 1+%d runs each", o.gateRuns)
	series := bench.Interleave(cases, 1, o.gateRuns)
	place := map[string]int{}
	for i, s := range series {
		place[s.Name] = i
	}
	for _, s := range series {
		floor, isGate := floors[s.Name]
		if !isGate {
			row(t, s, "–", "–")
			continue
		}
		baseline, result := "one alone / spawn floor", delta(s, series[0])+" / "+delta(s, series[floor])
		if unconfined, ok := strings.CutSuffix(s.Name, ", confined"); ok {
			if twin, ok := place[unconfined+", unconfined"]; ok {
				baseline, result = baseline+" / unconfined", result+" / "+delta(s, series[twin])
			}
		}
		row(t, s, baseline, result)
	}
	return nil
}

// throughput arms jobs entries, each by its own detect process, k at a
// time, and checks that every one of them is in the queue afterwards.
func (o *options) throughput(t *bench.Table) error {
	for _, k := range []int{1, 8, 64} {
		name := fmt.Sprintf("enqueue, %d concurrent detect process(es)", k)
		if !o.wants(name) {
			continue
		}
		p, err := bench.WriteProject(filepath.Join(o.tmp, fmt.Sprintf("throughput-%d", k)), 10)
		if err != nil {
			return err
		}
		arm := o.hook(o.detect, p.Dir, func(j int) []byte { return p.Matched(fmt.Sprintf("bench-q%d-%d", k, j)) }, contains("additionalContext"))
		if _, err := arm.Run(-1); err != nil { // warm the config cache
			return err
		}
		o.logf("measuring enqueue throughput, %d concurrent detects", k)
		wall, err := bench.Concurrently(k, o.jobs, func(j int) error { _, err := arm.Run(j); return err })
		if err != nil {
			row(t, bench.Series{Name: name, Err: err}, "", "")
			continue
		}
		// An entry is sessions/<session>/<scope>/<prompt>.json.
		found, _ := filepath.Glob(filepath.Join(p.Dir, "tmp", "validation", "sessions", "*", "*", "*.json"))
		result := fmt.Sprintf("%.0f enqueues/s", float64(o.jobs)/wall.Seconds())
		if len(found) != o.jobs+1 {
			result += fmt.Sprintf(", LOST: %d of %d entries found", len(found), o.jobs+1)
		}
		t.Add(name, fmt.Sprint(o.jobs), "–", "–", bench.Ms(wall)+" for all", result)
	}
	return nil
}

func count(n int) string {
	if n >= 1000 {
		return fmt.Sprintf("%d,%03d", n/1000, n%1000)
	}
	return fmt.Sprint(n)
}

func silent(_ int, out []byte) error {
	if len(out) > 0 {
		return fmt.Errorf("unexpected output: %s", firstLine(out))
	}
	return nil
}

func nonEmpty(_ int, out []byte) error {
	if len(bytes.TrimSpace(out)) == 0 {
		return errors.New("no output")
	}
	return nil
}

func contains(s string) func(int, []byte) error {
	return func(_ int, out []byte) error {
		if !bytes.Contains(out, []byte(s)) {
			return fmt.Errorf("output lacks %q: %s", s, firstLine(out))
		}
		return nil
	}
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return s
}
