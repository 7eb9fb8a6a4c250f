package validator

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stopgate/stopgate/internal/trust/program"
)

// Confinement runs a stop's Run commands in one bubblewrap sandbox (docs/security.md#confined-validators).
type Confinement struct {
	Required bool     // a command that cannot be confined is not run (Result.Unconfined)
	ReadOnly []string // absolute; the missing skipped (see Missing), symlinks followed
	Writable []string // folders bound writable over a read-only one above them
	Env      []string // KEY=VALUE set over the gate's environment inside
}

// bwrapBase are the arguments of every confined command, before the mounts.
var bwrapBase = []string{"--dev-bind", "/", "/", "--dev", "/dev", "--unshare-pid", "--proc", "/proc", "--cap-drop", "ALL", "--die-with-parent"}

var probe struct {
	once sync.Once
	made atomic.Bool // the probe ran in this process
	path string
	err  error
}

// Bwrap returns the path of a bwrap that can confine a command here, or why none; it probes once.
func Bwrap() (string, error) {
	probe.once.Do(func() {
		defer probe.made.Store(true)
		if probe.path, probe.err = program.System("bwrap"); probe.err != nil {
			probe.path, probe.err = "", errors.New("bwrap is not installed (the Debian and Ubuntu package is bubblewrap)")
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if out, err := exec.CommandContext(ctx, probe.path, append(slices.Clone(bwrapBase), "--", "true")...).CombinedOutput(); err != nil {
			probe.path, probe.err = "", cannotSandbox(probe.path, string(out), err)
		}
	})
	return probe.path, probe.err
}

// cannotSandbox is why bwrap failed: the first line it printed, or how it ended.
func cannotSandbox(path, stderr string, err error) error {
	why := cmp.Or(strings.TrimSuffix(strings.TrimSpace(firstLine(stderr)), "."), err.Error())
	return fmt.Errorf("%s cannot create a sandbox here: %s", path, why)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// args returns bwrap's arguments that run argv in dir confined.
func (c *Confinement) args(dir string, argv ...string) []string {
	args, m := slices.Clone(bwrapBase), c.mounts()
	for _, p := range slices.Sorted(maps.Keys(m)) { // a folder before what is in it
		args = append(args, m[p], p, p)
	}
	for _, kv := range c.Env {
		k, v, _ := strings.Cut(kv, "=")
		args = append(args, "--setenv", k, v)
	}
	return append(append(args, "--chdir", dir, "--"), argv...)
}

// mounts maps each path bound onto itself to its bwrap option: ReadOnly ("--ro-bind") and Writable paths, resolved,
// and each folder above them (or a missing one's nearest parent) not inside a read-only one, pinned ("--bind").
func (c *Confinement) mounts() map[string]string {
	m := map[string]string{} // path: its op
	for _, p := range c.Writable {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			m[real] = "--bind"
		}
	}
	var above []string // the folders to pin
	for _, p := range c.ReadOnly {
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			for dir := filepath.Dir(p); dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
				if real, err := filepath.EvalSymlinks(dir); err == nil { // its nearest existing parent
					above = append(above, real)
					break
				}
			}
			continue
		}
		if m[real] == "" { // resolved, it exists
			m[real] = "--ro-bind"
		}
	}
	for p := range m {
		above = append(above, filepath.Dir(p))
	}
	for _, dir := range above {
		for ; dir != "/" && dir != "." && m[dir] == ""; dir = filepath.Dir(dir) {
			if !readOnlyIn(m, dir) {
				m[dir] = "--bind"
			}
		}
	}
	return m
}

// readOnlyIn reports whether dir lies in a read-only mount of m, no writable one between.
func readOnlyIn(m map[string]string, dir string) bool {
	d := filepath.Dir(dir)
	for m[d] == "" && d != filepath.Dir(d) {
		d = filepath.Dir(d)
	}
	return m[d] == "--ro-bind"
}

// Missing returns the paths that do not exist: bwrap cannot mount them, so none may have Appeared after.
func Missing(paths []string) []string { return statted(paths, false) }

// Appeared returns those of missing that exist now.
func Appeared(missing []string) []string { return statted(missing, true) }

// statted returns the paths that exist, or with !exist do not; nil for none. One os.Stat cannot tell is neither.
func statted(paths []string, exist bool) []string {
	var out []string
	for _, p := range paths {
		if _, err := os.Stat(p); exist && err == nil || !exist && errors.Is(err, os.ErrNotExist) {
			out = append(out, p)
		}
	}
	return out
}

// SandboxArg makes a binary that runs confined validators the runner inside the sandbox (Serve).
const SandboxArg = "__confined"

// boxRequest is what the gate sends the runner: Env without Confine, each Spec's command.
type boxRequest struct {
	Nonce string
	Env   Env
	Specs []Spec
}

// boxLine is one line of the report: Hello, one Result per spec (Output as captured), then End.
type boxLine struct {
	Nonce  string
	Hello  bool `json:",omitempty"`
	End    bool `json:",omitempty"`
	I      int
	Output []byte
	Result Result
}

// runConfined runs the specs at idx in one sandbox; where there is none, unconfined unless Required.
func runConfined(ctx context.Context, env Env, specs []Spec, idx []int, results []Result, dog *watchdog, saw func(Result) Result) {
	var boxed []Spec // what the runner needs of each
	for _, i := range idx {
		boxed = append(boxed, Spec{Run: specs[i].Run, Env: specs[i].Env, Timeout: specs[i].Timeout})
		results[i] = stopped() // by a file check (fail_fast), unless run
	}
	if errors.Is(context.Cause(ctx), errStopped) {
		return
	}
	bwrap, err := program.System("bwrap") // no probe before the sandbox: its failure probes
	if err != nil || probe.made.Load() {
		bwrap, err = Bwrap()
	}
	var got []Result
	if err == nil {
		got, err = sandbox(ctx, env, bwrap, boxed)
	}
	if err != nil {
		if _, perr := Bwrap(); perr != nil {
			err = perr
		} else { // bwrap works, this sandbox did not: no unconfined run for an agent that broke a mount
			got = slices.Repeat([]Result{{Problem: "not run: its sandbox did not start: " + err.Error(), ExitCode: -1, Confined: true}}, len(idx))
		}
	}
	each(len(idx), func(j int) {
		switch i := idx[j]; {
		case got != nil:
			results[i] = got[j]
		case env.Confine.Required:
			results[i] = Result{Problem: "not run: it must be confined ([settings] confine = true), but " + err.Error(), ExitCode: -1, Unconfined: true}
		default:
			results[i] = saw(runOne(ctx, env, specs[i], dog))
		}
	})
}

// sandbox runs the runner in bwrap and returns the results, or an error when it never said hello.
func sandbox(ctx context.Context, env Env, bwrap string, specs []Spec) ([]Result, error) {
	confine := env.Confine
	self, err := program.Self()
	if err != nil {
		return nil, fmt.Errorf("cannot find the program to run in it: %w", err)
	}
	env.Confine = nil // sent to the runner, which is inside it
	req := boxRequest{Nonce: rand.Text(), Env: env, Specs: specs}
	data, _ := json.Marshal(req) // of strings and numbers only
	var bound time.Duration      // the longest timeout (to the deadline), cleanup and a slow bwrap
	for _, s := range specs {
		bound = max(bound, s.timeout())
	}
	bound, _ = env.within(bound)
	bound += drainGrace + reapGrace + 2*time.Second
	ctx, cancel := context.WithTimeoutCause(ctx, bound, errTimedOut)
	defer cancel()
	stderr := &capped{limit: 4 << 10}
	cmd := exec.CommandContext(ctx, bwrap, confine.args(env.Dir, self, SandboxArg)...)
	cmd.Dir, cmd.Stdin, cmd.Stderr = env.Dir, bytes.NewReader(data), stderr
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	pr, err := launch(cmd)
	if err != nil {
		return nil, err
	}
	defer pr.Close()
	results, hello, err := readReport(pr, req.Nonce, len(specs), env.outputLimit()/3*4+64<<10)
	cause := context.Cause(ctx)
	// End the sandbox before bwrap is reaped and its pid can be another's.
	killGroup(cmd)
	waitErr := cmd.Wait()
	if !hello {
		return nil, cannotSandbox(bwrap, stderr.String(), cmp.Or(waitErr, io.ErrUnexpectedEOF))
	}
	if err == nil {
		return results, nil
	}
	why, overdue := err.Error(), errors.Is(cause, errTimedOut)
	switch {
	case overdue:
		why = fmt.Sprintf("it did not report within %s and was killed", bound.Round(time.Millisecond))
	case cause != nil:
		why = "canceled"
	case errors.Is(err, io.ErrUnexpectedEOF) && firstLine(stderr.String()) != "":
		why += ": " + firstLine(stderr.String())
	}
	failed := Result{Problem: "not judged: the sandbox's runner failed (" + why + ")", ExitCode: -1, Confined: true, TimedOut: overdue}
	return slices.Repeat([]Result{failed}, len(specs)), nil
}

// readReport reads the runner's lines until End, EOF or one not its report; err says why the results do not count.
func readReport(r io.Reader, nonce string, n, limit int) (results []Result, hello bool, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, min(64<<10, limit)), limit)
	left := n
	results = make([]Result, n) // Confined once its line came
	for sc.Scan() {
		var l boxLine
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		switch err := dec.Decode(&l); {
		case err != nil || dec.More() || l.Nonce != nonce:
			return results, hello, errors.New("a line that is not its report")
		case !l.Hello && !hello:
			return results, hello, errors.New("no hello")
		case !hello:
			hello = true
		case l.End && left == 0:
			return results, hello, nil
		case l.Hello || l.End || l.I < 0 || l.I >= n || results[l.I].Confined:
			return results, hello, errors.New("a line out of order")
		default:
			left--
			l.Result.Output, l.Result.Confined = string(l.Output), true
			results[l.I] = l.Result
		}
	}
	if err = sc.Err(); err == nil {
		err = fmt.Errorf("it ended with %d of %d reported: %w", n-left, n, io.ErrUnexpectedEOF)
	}
	return results, hello, err
}

// Serve is the runner inside a stop's sandbox: it runs the specs with Run and reports them.
func Serve(stdin io.Reader, stdout io.Writer) error {
	hideSelf()         // before any validator starts: none may open our stdout or trace us
	var req boxRequest // specs, not data: 64 MiB at most
	if err := json.NewDecoder(io.LimitReader(stdin, 64<<20)).Decode(&req); err != nil {
		return fmt.Errorf("reading the sandbox's request: %w", err)
	}
	// Drain it: bwrap holds the pipe too, and validators must find it empty.
	io.Copy(io.Discard, stdin)
	enc := json.NewEncoder(stdout) // one whole line at a time
	if err := enc.Encode(boxLine{Nonce: req.Nonce, Hello: true}); err != nil {
		return err
	}
	req.Env.boxed = true
	for i, r := range Run(context.Background(), req.Env, req.Specs) {
		line := boxLine{Nonce: req.Nonce, I: i, Output: []byte(r.Output), Result: r}
		line.Result.Output = ""
		if err := enc.Encode(line); err != nil {
			return err
		}
	}
	return enc.Encode(boxLine{Nonce: req.Nonce, End: true})
}
