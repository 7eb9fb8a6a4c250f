package validator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/regular"
	"github.com/stopgate/stopgate/internal/trust/program"
)

const (
	defaultOutputLimit = 64 << 10
	// DefaultTimeout bounds a validator whose Spec sets none; it is also
	// [settings] timeout's default (package config). A real test suite
	// took 57 s to 1 m 48 s under the gate, beside the other validators:
	// 5 minutes leaves room for one, and a hung validator still fails by
	// its own name well before the clients' 600 s Stop hook timeout.
	DefaultTimeout = 5 * time.Minute
	// drainGrace is how long output is still read after a command exits and
	// its process group is killed: a child that escaped the group (setsid)
	// and holds the pipe open cannot delay the gate beyond it.
	drainGrace = 250 * time.Millisecond
	// reapGrace bounds the wait for the killed members of a group to be
	// reaped. SIGKILLed processes die at once; only one stuck in the
	// kernel (a hung NFS read) takes longer, and the gate must not wait
	// for it.
	reapGrace = 2 * time.Second
	// maxFileBytes bounds how much of a File is read for its expectations.
	maxFileBytes = 16 << 20
)

// Run runs every spec at once and returns their results in the order of
// specs. A spec's timeout kills its whole process group. Run itself never
// fails: a check that cannot start is a failing Result saying why. With
// env.Confine, the run specs all go into one sandbox (sandbox.go). With
// env.FailFast the file checks run first, and the first failure stops the
// rest (Result.Stopped).
func Run(ctx context.Context, env Env, specs []Spec) []Result {
	results := make([]Result, len(specs))
	ctx, ff := failFast(ctx, env.FailFast)
	defer ff.cancel(nil)
	if env.FailFast && !filesPass(env, specs, results) {
		return results // a file check failed: no run validator is started
	}
	var boxed []int // the run specs that go into the stop's one sandbox
	if env.Confine != nil {
		for i, s := range specs {
			if s.Run != "" {
				boxed = append(boxed, i)
			}
		}
	}
	dog := &watchdog{}
	defer dog.stop()
	each(len(specs), func(i int) {
		switch {
		case specs[i].Judge != nil: // below: it may read the others' output
		case env.FailFast && specs[i].Run == "": // a file check, run first (filesPass)
		case len(boxed) == 0 || specs[i].Run == "":
			results[i] = ff.saw(runOne(ctx, env, specs[i], dog))
		case i == boxed[0]: // the sandbox, for every boxed spec; its runner stops them itself
			runConfined(ctx, env, specs, boxed, results, dog, ff)
		}
	})
	each(len(specs), func(i int) {
		switch {
		case specs[i].Judge == nil:
		case errors.Is(context.Cause(ctx), errStopped):
			results[i] = stopped(specs[i].Name)
		default:
			results[i] = runJudge(ctx, env, specs[i], specs, results)
		}
	})
	return results
}

// errStopped cancels the checks still running when one failed (fail-fast).
var errStopped = errors.New("stopped: another check failed first (fail_fast)")

// stopping stops the checks of one run once one fails, when on.
type stopping struct {
	on     bool
	cancel context.CancelCauseFunc
}

func failFast(ctx context.Context, on bool) (context.Context, stopping) {
	ctx, cancel := context.WithCancelCause(ctx)
	return ctx, stopping{on: on, cancel: cancel}
}

// saw passes r on, stopping the other checks first when it failed.
func (s stopping) saw(r Result) Result {
	if s.on && !r.Passed {
		s.cancel(errStopped)
	}
	return r
}

// filesPass runs the file checks of specs first, cheap as they are, and
// reports whether all passed; where one failed, the run ones are set
// stopped without being started.
func filesPass(env Env, specs []Spec, results []Result) bool {
	pass := true
	for i, s := range specs {
		if s.Run == "" && s.Judge == nil {
			results[i] = runOne(context.Background(), env, s, nil)
			pass = pass && results[i].Passed
		}
	}
	for i, s := range specs {
		if !pass && (s.Run != "" || s.Judge != nil) {
			results[i] = stopped(s.Name)
		}
	}
	return pass
}

// stopped is the result of a check fail-fast stopped before it started.
func stopped(name string) Result {
	return Result{Name: name, Problem: errStopped.Error(), ExitCode: -1, Stopped: true}
}

// each runs f(0) … f(n-1) at once and returns when all have returned: the
// one fan-out of validators, in the gate and in the sandbox's runner.
func each(n int, f func(i int)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { f(i) })
	}
	wg.Wait()
}

// runOne runs one spec unconfined, named and timed: the one code path of a
// command, in the gate and in the sandbox's runner alike. dog is nil in the
// sandbox, whose pid namespace ends what a validator leaves.
func runOne(ctx context.Context, env Env, s Spec, dog *watchdog) Result {
	start := time.Now()
	var r Result
	if s.Run != "" {
		r = runCommand(ctx, env, s, dog)
	} else {
		r = checkFile(env, s)
	}
	r.Name = s.Name
	r.Duration = time.Since(start)
	return r
}

func checkFile(env Env, s Spec) Result {
	if s.Diff != nil {
		return checkDiff(env, s)
	}
	path := s.File
	if !filepath.IsAbs(path) {
		path = filepath.Join(env.Dir, path)
	}
	// Through regular.Open: a named pipe with no writer would hold the
	// gate until the client kills it at its hook timeout, letting the stop
	// through.
	f, st, err := regular.Open(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return Result{Output: s.File + ": no such file"}
	case errors.Is(err, regular.ErrNotRegular) && st.IsDir():
		return Result{Output: s.File + ": is a directory, not a file"}
	case errors.Is(err, regular.ErrNotRegular):
		return Result{Output: fmt.Sprintf("%s: is not a regular file (%s)", s.File, st.Mode().Type())}
	case err != nil:
		return Result{Output: fmt.Sprintf("%s: %v", s.File, unwrapPath(err))}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileBytes))
	if err != nil {
		return Result{Output: fmt.Sprintf("%s: %v", s.File, unwrapPath(err))}
	}
	whys := CheckAll(string(data), s.Expect)
	if len(whys) == 0 {
		return Result{Passed: true}
	}
	for i, w := range whys {
		whys[i] = s.File + ": " + w
	}
	return Result{Output: strings.Join(whys, "\n")}
}

// errTimedOut cancels a command that ran past its timeout.
var errTimedOut = errors.New("timed out")

// adopt makes the process a subreaper once, before its first command.
var adopt sync.Once

// runCommand runs a run validator with sh -c in its own process group,
// bounded by its timeout, its output captured up to the limit.
func runCommand(ctx context.Context, env Env, s Spec, dog *watchdog) Result {
	timeout := s.timeout()
	limit := env.outputLimit()
	if why := Unrunnable(env.Dir, s.Run); why != "" {
		return Result{Problem: "cannot start: " + why, ExitCode: -1}
	}
	if errors.Is(context.Cause(ctx), errStopped) {
		return stopped(s.Name)
	}
	// The timeout counts from the start of the command, not of this
	// function: a gate slowed down before Start must not fail the check.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	// Output goes through a pipe of our own rather than exec's copying
	// goroutine, so that Wait returns when the command exits even if a
	// background child still holds the pipe open.
	pr, pw, err := os.Pipe()
	if err != nil {
		return Result{Problem: "cannot start: " + err.Error(), ExitCode: -1}
	}
	out := &capped{limit: limit}
	if env.Output == OutputFailures {
		out.tail = newTailKeep(limit)
	}
	drained := make(chan struct{})
	go func() { io.Copy(out, pr); close(drained) }()

	cmd := exec.CommandContext(ctx, program.Shell(), "-c", s.Run)
	cmd.Args[0] = "sh" // its messages say "sh: 1: ...", as sh on PATH did
	cmd.Dir = env.Dir
	cmd.Env = append(append(os.Environ(), env.Vars...), s.Env...)
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = pw, pw
	cmd.SysProcAttr = procAttr()
	cmd.Cancel = func() error { return killGroup(cmd) }
	cmd.WaitDelay = time.Second
	adopt.Do(adoptOrphans)
	if dog != nil {
		dog.ready()
	}
	// The parent-death signal fires when the thread that started the
	// command ends, not the process: hold this goroutine on its thread
	// until the command is waited for, so that Go cannot retire it first.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	err = cmd.Start()
	why := ""
	if !env.Deadline.IsZero() {
		if left := time.Until(env.Deadline); left < timeout {
			timeout, why = max(left, time.Millisecond), env.DeadlineWhy
		}
	}
	timer := time.AfterFunc(timeout, func() { cancel(errTimedOut) })
	defer timer.Stop()
	pw.Close()
	if err != nil {
		pr.Close()
		return Result{Problem: "cannot start: " + err.Error(), ExitCode: -1}
	}
	if dog != nil {
		dog.watch(cmd.Process.Pid)
	}
	waitErr := cmd.Wait()
	// Judged now: the deadline passing while leftovers are cleaned up
	// below does not make a finished check a timeout.
	ctxErr := context.Cause(ctx)
	endGroup(cmd, pr, drained)
	return resultOf(cmd.ProcessState, out, waitErr, ctxErr, timeout, why)
}

// endGroup ends what is left of a finished command: leftover children of
// its group would hold the pipe and keep running after the gate returns,
// and a validator's work ends with it. The leader's pid, which names the
// group, is not handed out again before pid_max wraps, so the kill cannot
// reach a stranger. Output still in the pipe is read for drainGrace.
func endGroup(cmd *exec.Cmd, pr *os.File, drained <-chan struct{}) {
	killGroup(cmd)
	reaped := make(chan struct{})
	go func() { reapGroup(cmd.Process.Pid); close(reaped) }()
	select {
	case <-drained:
	case <-time.After(drainGrace):
	}
	pr.Close()
	<-drained
	select {
	case <-reaped:
	case <-time.After(reapGrace):
	}
}

// resultOf judges how a command ended: a deadline or a cancellation seen
// when it exited outweighs its exit status.
func resultOf(ps *os.ProcessState, out *capped, waitErr, ctxErr error, timeout time.Duration, why string) Result {
	r := Result{Output: out.String(), Dropped: out.dropped, ExitCode: ps.ExitCode()}
	switch {
	case errors.Is(ctxErr, errStopped) && waitErr != nil:
		r.Problem, r.Stopped, r.ExitCode = errStopped.Error(), true, -1
	case errors.Is(ctxErr, errStopped):
		r.Passed = true // it passed as the stop came
	case errors.Is(ctxErr, errTimedOut):
		r.Problem = fmt.Sprintf("timed out after %s and was killed, with the processes it started", timeout.Round(time.Millisecond))
		if why != "" {
			r.Problem += ": " + why
		}
		r.TimedOut = true
		r.ExitCode = -1
	case ctxErr != nil:
		r.Problem = "canceled"
		r.ExitCode = -1
	case waitErr == nil:
		r.Passed = true
	default:
		r.Problem = exitProblem(ps)
	}
	return r
}

// exitProblem explains an exit that is not a verdict of the check itself:
// death by a signal, or the codes the shell uses for a command it could
// not run or that a signal killed. Ordinary failures give "".
func exitProblem(ps *os.ProcessState) string {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	code := ps.ExitCode()
	switch {
	case ok && ws.Signaled():
		return "killed by signal " + signalName(ws.Signal())
	case code == 126:
		return "exit status 126: the shell found the command but could not execute it"
	case code == 127:
		return "exit status 127: the shell could not find the command"
	}
	if sig := syscall.Signal(code - 128); code > 128 && code <= 128+64 && cli.SignalName(sig) != sig.String() {
		return fmt.Sprintf("exit status %d: the shell's code for a command killed by %s", code, signalName(sig))
	}
	return ""
}

// Unrunnable reports why the program a run line starts with cannot run from
// dir, when the line names it by path: missing, a directory, or not
// executable (the shell's own messages for this are terse). It returns ""
// when the program looks runnable, and for programs found on $PATH or shell
// syntax, which only running can judge. `gate check` reports with it what
// the gate would find at stop time.
func Unrunnable(dir, run string) string {
	fields := strings.Fields(run)
	if len(fields) == 0 {
		return "the run command is empty"
	}
	prog := fields[0]
	if !strings.Contains(prog, "/") || strings.ContainsAny(prog, `"'$`+"`") {
		return ""
	}
	path := prog
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return prog + ": no such file"
	case err != nil:
		return fmt.Sprintf("%s: %v", prog, unwrapPath(err))
	case st.IsDir():
		return prog + ": is a directory, not a program"
	case st.Mode()&0o111 == 0:
		return prog + ": not executable (chmod +x " + prog + ")"
	}
	return ""
}

func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

// signalName names a signal for a person: "SIGSEGV (segmentation fault)".
func signalName(s syscall.Signal) string {
	if name := cli.SignalName(s); name != s.String() {
		return name + " (" + s.String() + ")"
	}
	return s.String()
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// capped keeps what a command printed within limit bytes, and counts the
// rest: all of it while it fits; past that, the first bytes, or with tail
// (Env.Output "failures") the first lines, the failing lines let go in
// between (failingLine) and the last bytes, where runners put failures
// and their summary. Its memory is bounded by the limit either way.
type capped struct {
	mu      sync.Mutex
	buf     []byte
	limit   int
	dropped int64
	total   int64
	tail    *tailKeep
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total += int64(len(p))
	if c.tail != nil {
		c.buf = append(c.buf, p...)
		c.dropped = max(c.total-int64(c.limit), 0)
		if len(c.buf) > 2*c.limit { // let go in batches: each byte is moved once or twice
			c.tail.letGo(c)
		}
		return len(p), nil
	}
	room := min(max(c.limit-len(c.buf), 0), len(p))
	c.buf = append(c.buf, p[:room]...)
	c.dropped += int64(len(p) - room)
	return len(p), nil
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tail == nil {
		return string(c.buf)
	}
	t := c.tail
	t.letGo(c)
	if c.total <= int64(c.limit) {
		return string(c.buf)
	}
	head := c.buf[:t.head]
	if i := bytes.LastIndexByte(head, '\n'); i >= 0 {
		head = head[:i+1] // its last line goes on in what was let go
	}
	// t.line starts the tail's first line, its start let go.
	return string(head) + string(t.fails) + string(t.line) + string(c.buf[t.head:])
}

// tailKeep is what capped keeps, with tail, of the output it lets go.
type tailKeep struct {
	head  int    // bytes at the start of buf never let go
	fails []byte // the failing lines let go, whole, up to half the limit
	line  []byte // the start of the line being let go, up to maxFailLine
	block int    // the indentation of the failing block let go, -1 if none
}

const maxFailLine = 1 << 10

func newTailKeep(limit int) *tailKeep { return &tailKeep{head: limit / 8, block: -1} }

// letGo lets go of buf's oldest bytes after the head, keeping their
// failing lines, until what is kept fits the limit.
func (t *tailKeep) letGo(c *capped) {
	for len(c.buf)+len(t.fails) > c.limit {
		n := min(len(c.buf)+len(t.fails)-c.limit, len(c.buf)-t.head)
		t.scan(c.buf[t.head:t.head+n], c.limit/2)
		c.buf = append(c.buf[:t.head], c.buf[t.head+n:]...)
	}
}

// scan keeps, of bytes let go, the lines of failing blocks while the
// budget lasts: a line that reads as failing and the lines indented
// deeper (or blank) that follow it, as TAP's YAML and go test's messages
// follow their test.
func (t *tailKeep) scan(p []byte, budget int) {
	for len(p) > 0 {
		end := bytes.IndexByte(p, '\n')
		chunk := p
		if end >= 0 {
			chunk = p[:end]
		}
		t.line = append(t.line, chunk[:min(len(chunk), maxFailLine-len(t.line))]...)
		if end < 0 {
			return
		}
		p = p[end+1:]
		ind := indent(t.line)
		inBlock := t.block >= 0 && (ind > t.block || ind == len(t.line))
		if !inBlock {
			t.block = -1
			if failingLine(t.line) {
				t.block, inBlock = ind, true
			}
		}
		if inBlock && len(t.fails)+len(t.line) < budget {
			t.fails = append(append(t.fails, t.line...), '\n')
		}
		t.line = t.line[:0]
	}
}
