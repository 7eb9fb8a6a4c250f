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
	DefaultTimeout     = 5 * time.Minute // of a Spec that sets none, within the clients' 600 s Stop hook timeout
	// bound the wait for output and reaping: an escaped (setsid) or stuck child cannot hold the gate
	drainGrace = 250 * time.Millisecond
	reapGrace  = 2 * time.Second
)

// Run runs every spec at once and returns their results in specs' order; a check that cannot start fails.
func Run(ctx context.Context, env Env, specs []Spec) []Result {
	results := make([]Result, len(specs))
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	saw := func(r Result) Result { // fail_fast: a failure stops the other checks
		if env.FailFast && !r.Passed {
			cancel(errStopped)
		}
		return r
	}
	var boxed []int // the run specs that share the sandbox
	for i, s := range specs {
		if env.FailFast && s.Run == "" && s.Judge == nil { // first: one failing starts no run validator
			results[i] = saw(runOne(ctx, env, s, nil))
		} else if env.Confine != nil && s.Run != "" {
			boxed = append(boxed, i)
		}
	}
	dog := &watchdog{off: env.boxed} // none in the sandbox: its pid namespace ends every validator
	defer dog.stop()
	each(len(specs), func(i int) {
		switch {
		case specs[i].Judge != nil: // below: it may read the others' output
		case env.FailFast && specs[i].Run == "": // a file check, run first
		case len(boxed) == 0 || specs[i].Run == "":
			results[i] = saw(runOne(ctx, env, specs[i], dog))
		case i == boxed[0]: // the sandbox, for every boxed spec; its runner stops them itself
			runConfined(ctx, env, specs, boxed, results, dog, saw)
		}
	})
	each(len(specs), func(i int) {
		switch {
		case specs[i].Judge == nil:
		case errors.Is(context.Cause(ctx), errStopped):
			results[i] = stopped()
		default:
			results[i] = runJudge(ctx, env, specs[i], specs, results)
		}
	})
	for i := range results {
		results[i].Name = specs[i].Name
	}
	return results
}

var errStopped = errors.New("stopped: another check failed first (fail_fast)")

func stopped() Result { return Result{Problem: errStopped.Error(), ExitCode: -1, Stopped: true} }

// each runs f(0) … f(n-1) at once and returns when all have returned.
func each(n int, f func(i int)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { f(i) })
	}
	wg.Wait()
}

// runOne runs one spec unconfined and timed.
func runOne(ctx context.Context, env Env, s Spec, dog *watchdog) Result {
	start := time.Now()
	var r Result
	switch {
	case s.Run != "":
		r = runCommand(ctx, env, s, dog)
	case s.Diff != nil: // a record it cannot use is a Problem, never a pass
		v := s.Diff.Judge(env.Dir, s.Baselines, s.Skip)
		r = Result{Output: strings.Join(v.Fails, "\n"), Problem: v.Problem, Passed: len(v.Fails) == 0 && v.Problem == ""}
	default:
		r = checkFile(env, s)
	}
	r.Duration = time.Since(start)
	return r
}

func checkFile(env Env, s Spec) Result {
	data, st, err := regular.Read(inDir(env.Dir, s.File), 16<<20)
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
	whys := CheckAll(string(data), s.Expect)
	for i, w := range whys {
		whys[i] = s.File + ": " + w
	}
	return Result{Output: strings.Join(whys, "\n"), Passed: len(whys) == 0}
}

var (
	errTimedOut = errors.New("timed out") // cancels a command past its timeout
	adopt       sync.Once                 // makes the process a subreaper before its first command
)

// runCommand runs s.Run with sh -c in its own process group, bounded.
func runCommand(ctx context.Context, env Env, s Spec, dog *watchdog) Result {
	notStarted := func(why string) Result { return Result{Problem: "cannot start: " + why, ExitCode: -1} }
	if errors.Is(context.Cause(ctx), errStopped) {
		return stopped()
	}
	if why := Unrunnable(env.Dir, s.Run); why != "" {
		return notStarted(why)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	cmd := exec.CommandContext(ctx, program.Shell(), "-c", s.Run)
	cmd.Args[0] = "sh" // its messages say "sh: 1: ...", as sh on PATH did
	cmd.Dir = env.Dir
	cmd.Env = append(append(os.Environ(), env.Vars...), s.Env...)
	adopt.Do(adoptOrphans)
	dog.watch(0)
	runtime.LockOSThread() // until Wait: see launch
	defer runtime.UnlockOSThread()
	pr, err := launch(cmd)
	if err != nil {
		return notStarted(err.Error())
	}
	out := &capped{limit: env.outputLimit(), tail: env.Output == OutputFailures, block: -1}
	drained := make(chan struct{})
	go func() { io.Copy(out, pr); close(drained) }()
	timeout, why := env.within(s.timeout())
	// From the command's start: a gate slowed before it must not fail it.
	timer := time.AfterFunc(timeout, func() { cancel(errTimedOut) })
	defer timer.Stop()
	dog.watch(cmd.Process.Pid)
	waitErr := cmd.Wait()
	// Judged now: a deadline passing during the cleanup is no timeout.
	ctxErr := context.Cause(ctx)
	endGroup(cmd, pr, drained)
	// How it ended: a deadline or cancellation outweighs its status.
	r := Result{Output: out.String(), Dropped: out.dropped, ExitCode: cmd.ProcessState.ExitCode()}
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
		r.TimedOut, r.ExitCode = true, -1
	case ctxErr != nil:
		r.Problem, r.ExitCode = "canceled", -1
	case waitErr == nil:
		r.Passed = true
	default:
		r.Problem = exitProblem(cmd.ProcessState)
	}
	return r
}

// launch starts cmd (CommandContext's, the caller holding the thread until Wait) in a group its context's end and the
// gate's death kill, output and errors into a pipe whose read end it returns: Wait returns even if a child holds it.
func launch(cmd *exec.Cmd) (*os.File, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = pw
	if cmd.Stderr == nil {
		cmd.Stderr = pw
	}
	cmd.SysProcAttr, cmd.WaitDelay = procAttr(), time.Second
	cmd.Cancel = func() error { return killGroup(cmd) }
	err = cmd.Start()
	pw.Close()
	if err != nil {
		pr.Close()
		return nil, err
	}
	return pr, nil
}

// endGroup kills what is left of a finished command's group and drains the pipe.
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

// exitProblem explains an exit that is no verdict (a signal, the shell's 126, 127 and 128+N), else "".
func exitProblem(ps *os.ProcessState) string {
	ws, _ := ps.Sys().(syscall.WaitStatus)
	code, sig := ps.ExitCode(), syscall.Signal(ps.ExitCode()-128)
	if ws.Signaled() {
		sig = ws.Signal()
	}
	name := cli.SignalName(sig) // "SIGSEGV (segmentation fault)" for a person
	if name != sig.String() {
		name += " (" + sig.String() + ")"
	}
	switch {
	case ws.Signaled():
		return "killed by signal " + name
	case code == 126:
		return "exit status 126: the shell found the command but could not execute it"
	case code == 127:
		return "exit status 127: the shell could not find the command"
	case code > 128 && code <= 128+64 && name != sig.String():
		return fmt.Sprintf("exit status %d: the shell's code for a command killed by %s", code, name)
	}
	return ""
}

// Unrunnable says why the program a run line names by path cannot run from dir, or "".
func Unrunnable(dir, run string) string {
	fields := strings.Fields(run)
	if len(fields) == 0 {
		return "the run command is empty"
	}
	prog := fields[0]
	if !strings.Contains(prog, "/") || strings.ContainsAny(prog, `"'$`+"`") {
		return ""
	}
	st, err := os.Stat(inDir(dir, prog))
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

// inDir is path, relative to dir unless absolute.
func inDir(dir, path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(dir, path)
}

// killGroup kills the group of a started command.
func killGroup(cmd *exec.Cmd) error {
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

func unwrapPath(err error) error {
	if pe, ok := errors.AsType[*os.PathError](err); ok {
		return pe.Err
	}
	return err
}

// capped keeps what a command printed within limit bytes and counts the rest: the first bytes, or with
// tail (docs/validator-output.md; block -1) the first lines, failing lines and last bytes.
type capped struct {
	mu             sync.Mutex
	buf            []byte
	limit          int
	dropped, total int64
	tail           bool
	fails          []byte // the failing lines let go, whole, up to half the limit
	line           []byte // the start of the line being let go, up to maxFailLine
	block          int    // the indentation of the failing block let go, -1 if none
}

const maxFailLine = 1 << 10

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total += int64(len(p))
	if c.tail {
		c.buf = append(c.buf, p...)
		c.dropped = max(c.total-int64(c.limit), 0)
		if len(c.buf) > 2*c.limit { // in batches: each byte is moved once or twice
			c.letGo()
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
	if !c.tail || c.total <= int64(c.limit) { // within the limit, nothing was let go
		return string(c.buf)
	}
	c.letGo()
	head := c.buf[:c.limit/8] // never let go
	if i := bytes.LastIndexByte(head, '\n'); i >= 0 {
		head = head[:i+1] // its last line goes on in what was let go
	}
	// c.line starts the tail's first line, its start let go.
	return string(head) + string(c.fails) + string(c.line) + string(c.buf[c.limit/8:])
}

// letGo drops buf's oldest bytes after the head, but their failing lines, until it fits the limit.
func (c *capped) letGo() {
	for head := c.limit / 8; len(c.buf)+len(c.fails) > c.limit; {
		n := min(len(c.buf)+len(c.fails)-c.limit, len(c.buf)-head)
		c.scan(c.buf[head:head+n], c.limit/2)
		c.buf = append(c.buf[:head], c.buf[head+n:]...)
	}
}

// scan keeps, of bytes let go and within budget, each failing line and those indented under it.
func (c *capped) scan(p []byte, budget int) {
	for len(p) > 0 {
		chunk, rest, whole := bytes.Cut(p, []byte{'\n'})
		c.line = append(c.line, chunk[:min(len(chunk), maxFailLine-len(c.line))]...)
		if !whole {
			return
		}
		p = rest
		ind := indent(c.line)
		inBlock := c.block >= 0 && (ind > c.block || ind == len(c.line))
		if !inBlock {
			c.block = -1
			if failingLine(c.line) {
				c.block, inBlock = ind, true
			}
		}
		if inBlock && len(c.fails)+len(c.line) < budget {
			c.fails = append(append(c.fails, c.line...), '\n')
		}
		c.line = c.line[:0]
	}
}

// watchdog, a shell in a group of its own, kills one Run's unconfined validators' groups when the gate
// dies, even by SIGKILL, and its pipe closes: Pdeathsig reaches their shells, not their children.
type watchdog struct {
	off  bool      // in the sandbox
	once sync.Once // started before the first command; stopped after every command ended
	cmd  *exec.Cmd
	pw   io.Writer // its stdin, which only the gate holds
}

// watch hands the group pgid to the watchdog, started before the command (pgid 0).
func (d *watchdog) watch(pgid int) {
	if d.once.Do(d.start); d.pw != nil && pgid != 0 {
		fmt.Fprintf(d.pw, "%d\n", pgid)
	}
}

func (d *watchdog) start() {
	if d.off {
		return
	}
	cmd := exec.Command(program.Shell(), "-c", `while read p; do g="$g -$p"; done; kill -9 $g`)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if pw, err := cmd.StdinPipe(); err == nil && cmd.Start() == nil {
		d.cmd, d.pw = cmd, pw
	}
}

// stop ends the watchdog before Wait closes its pipe: it kills nothing.
func (d *watchdog) stop() {
	if d.cmd != nil {
		d.cmd.Process.Kill()
		d.cmd.Wait()
	}
}
