package guard

import (
	"bytes"
	"cmp"
	"os"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/stopgate/stopgate/internal/shell"
)

// Process attacks (docs/guard.md#hooks-that-cannot-be-starved): a hook stopped, killed, traced or starved never answers.

// processNames are the programs a pattern must not reach: stopgate's hooks and their clients.
var processNames = []string{"gate", "detect", "testhook", "claude", "node", "codex", "gemini", "copilot", "opencode"}

// processCmdlines are their command lines, for pkill -f.
var processCmdlines = []string{
	"node /usr/local/lib/node_modules/@anthropic-ai/claude-code/cli.js", "/usr/bin/claude --resume",
	"/project/bin/gate stop", "/project/bin/detect", "/project/bin/testhook stop", "sh -c bin/gate",
	"codex exec", "gemini -p", "copilot -p", "opencode run",
}

var findsClient = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)` + strings.Join(processNames, "|") + `|ppid|/proc|pgrep|pidof|\bps\b|\bpstree\b|\$\$`)
})

// signalsClient matches code that signals, limits or traces a process; with findsClient in the same code it is denied.
var signalsClient = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\b(kill|killpg|setrlimit|prlimit|ptrace|sigstop|sigkill|renice|setpriority|sched_setaffinity)\b`)
})

func procHit(a *analyzer, why string) *Hit {
	return &Hit{By: a.by, Why: why, proc: true, advice: "stopgate's hooks must be able to run: the agent being checked must not signal, stop, trace or limit the client or its hooks, since a hook that cannot run cannot check. Do not try another way; if a process really needs it, ask the user."}
}

const signalsByName = "it signals processes by user or by name, which can reach stopgate's client and hooks"

func alwaysProcess(a *analyzer, _ []string) *Hit { return procHit(a, signalsByName) }

// pids judges pid operands; strict denies a pid the dry run cannot know.
func (a *analyzer) pids(ws []string, verb string, strict bool) *Hit {
	return first(ws, func(w string) *Hit {
		t := strings.TrimSpace(w)
		switch {
		case t == "" || strings.HasPrefix(t, "%"):
			return nil // nothing, or a job of the agent's own shell
		case unknown(w) && (strict || slices.ContainsFunc(a.d.Texts(), findsClient().MatchString)):
			return procHit(a, "it would "+verb+" a process whose pid the guard cannot know, and stopgate's client and hooks must be able to run")
		case unknown(w):
			return nil
		}
		return first(strings.FieldsFunc(t, func(r rune) bool { return r == ',' || r == ' ' }), func(f string) *Hit {
			if n, err := strconv.Atoi(f); err == nil { // else a signal name or a job
				return a.pidNumber(n, verb)
			}
			return nil
		})
	})
}

func (a *analyzer) pidNumber(n int, verb string) *Hit {
	switch {
	case n <= 1:
		return procHit(a, "it would "+verb+" a process group or every process, which includes stopgate's client and hooks")
	case n == os.Getpid():
		return nil // $$ in the dry run: the agent's own shell
	}
	if name, ok := guardAncestors()[n]; ok {
		return procHit(a, "it would "+verb+" "+name+" (pid "+strconv.Itoa(n)+"), which runs stopgate's hooks (the client, or a process above it),")
	}
	name, _ := process(n)
	if lower := strings.ToLower(name); name != "" && slices.ContainsFunc(processNames, func(p string) bool { return strings.Contains(lower, p) }) {
		return procHit(a, "it would "+verb+" "+name+" (pid "+strconv.Itoa(n)+"), named like stopgate's client or hooks,")
	}
	return nil
}

var guardAncestors = sync.OnceValue(func() map[int]string {
	out := map[int]string{}
	for pid := os.Getppid(); pid > 1 && len(out) < 64 && out[pid] == ""; {
		name, ppid := process(pid)
		out[pid], pid = name, ppid
	}
	return out
})

func process(pid int) (name string, ppid int) {
	dir := "/proc/" + strconv.Itoa(pid)
	stat, err := os.ReadFile(dir + "/stat")
	open, end := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
	if err != nil || open < 0 || end < open {
		return "", 0
	}
	// pid (comm) state ppid …: comm may hold spaces and parentheses.
	name = string(stat[open+1 : end])
	if f := strings.Fields(string(stat[end+1:])); len(f) > 1 {
		ppid, _ = strconv.Atoi(f[1])
	}
	if cmd, err := os.ReadFile(dir + "/cmdline"); err == nil {
		args := strings.Split(string(cmd), "\x00")
		for _, arg := range args[:min(2, len(args))] {
			if b := path.Base(arg); arg != "" && b != name {
				name += " " + b
			}
		}
	}
	return name, ppid
}

// noSignal drops the -SIGNAL options (-9, -STOP) before any --, which getopt would read as letters.
func noSignal(args []string) []string {
	end := false // kill -- -1: after --, a pid
	return slices.DeleteFunc(slices.Clone(args), func(w string) bool {
		end = end || w == "--"
		return !end && isSignal(w)
	})
}

// isSignal reports whether w is a -SIGNAL option: -9, -KILL, -SIGSTOP, -RTMIN+1.
func isSignal(w string) bool {
	t, ok := strings.CutPrefix(w, "-")
	t = strings.TrimPrefix(strings.ToUpper(t), "SIG")
	return ok && !unknown(w) && (allDigits(t) || strings.HasPrefix(t, "RTM") || strings.Contains(signalNames, " "+t+" "))
}

const signalNames = " HUP INT QUIT ILL TRAP ABRT IOT BUS FPE KILL USR1 SEGV USR2 PIPE ALRM TERM STKFLT CHLD CONT STOP TSTP TTIN TTOU URG XCPU XFSZ VTALRM PROF WINCH IO POLL PWR SYS "

// killRule: -SIGNAL is only its first word; every other word but its options is a pid, -N a process group (-1: all).
func killRule(a *analyzer, args []string) *Hit {
	var pids []string
	for i := 0; i < len(args); i++ {
		switch t := args[i]; {
		case unknown(args[i]):
			pids = append(pids, args[i])
		case t == "-l" || t == "-L" || t == "--list" || t == "--table":
			return nil
		case t == "-s" || t == "-n" || t == "--signal":
			i++ // its value
		case i == 0 && isSignal(args[i]), t == "--", strings.HasPrefix(t, "--signal="):
		default:
			pids = append(pids, args[i])
		}
	}
	return a.pids(pids, "signal", false)
}

// pkillRule denies a pattern that can match a hook, a client or an ancestor, and selection by user or the like alone.
func pkillRule(a *analyzer, args []string) *Hit {
	o := shell.Parse(noSignal(args), "gGPstuUFe", "signal", "pgroup", "group", "parent", "session", "terminal", "euid", "uid", "pidfile", "ns", "nslist", "env")
	if o.Has("v", "inverse", "F", "pidfile") {
		return alwaysProcess(a, nil)
	}
	if h := a.pids(o.Val("P", "parent"), "signal the children of", true); h != nil {
		return h
	}
	if len(o.Ops) > 0 {
		return a.pattern(o.Ops[0], o.Has("f", "full"), o.Has("x", "exact"), o.Has("i", "ignore-case"))
	}
	if o.Has("u", "U", "g", "G", "s", "t", "euid", "uid", "pgroup", "group", "session", "terminal", "ns") {
		return alwaysProcess(a, nil)
	}
	return nil
}

func (a *analyzer) pattern(w string, full, exact, fold bool) *Hit {
	if unknown(w) {
		return procHit(a, "its process pattern is a value the guard cannot know, and could match stopgate's client or hooks")
	}
	expr := w
	if exact && !full {
		expr = "^(?:" + expr + ")$"
	}
	if fold {
		expr = "(?i)" + expr
	}
	cands := slices.Clone(processNames)
	for _, name := range guardAncestors() {
		cands = append(cands, strings.Fields(name)...)
	}
	if full {
		cands = append(cands, processCmdlines...)
	}
	// A pattern the guard cannot read is denied too.
	if re, err := regexp.Compile(expr); err != nil || slices.ContainsFunc(cands, re.MatchString) {
		return procHit(a, "its pattern "+strconv.Quote(w)+" can match the name of stopgate's client or hooks")
	}
	return nil
}

// gdbRule: -p, gdb PROG PID and an -ex attach all attach to a process.
func gdbRule(a *analyzer, args []string) *Hit {
	args = slices.Clone(args)
	for i, w := range args {
		if long, ok := strings.CutPrefix(w, "-"); ok && len(long) > 1 && long[0] != '-' && !unknown(w) {
			args[i] = "-" + w // gdb spells its long options with one dash too
		}
	}
	o := shell.Parse(args, "pxe", "pid", "ex", "iex", "eval-command", "init-eval-command", "command", "core", "exec", "se", "symbols", "cd", "directory")
	if h := a.pids(o.Val("p", "pid"), "attach a debugger to", true); h != nil {
		return h
	}
	if slices.ContainsFunc(o.Val("ex", "iex", "eval-command", "init-eval-command"), func(w string) bool { return unknown(w) || strings.Contains(w, "attach") }) {
		return procHit(a, "it attaches a debugger to a process, which can stop stopgate's client or hooks")
	}
	if len(o.Ops) > 1 && (unknown(o.Ops[1]) || allDigits(o.Ops[1])) {
		return a.pids(o.Ops[1:2], "attach a debugger to", true)
	}
	return nil
}

// pidRule is a program acting on pids (pidOpts' values, ops' operands); deny options reach them wholesale; wraps: given no pid, it runs a command.
type pidRule struct {
	verb, short   string
	long, pidOpts []string
	deny          []string
	why           string // the reason deny gives, when not alwaysProcess's
	ops           func(shell.Opts) []string
	wraps         string
	out           []string // options whose values it writes (strace -o)
	names         []string // options whose values are exact process names (cpulimit -e)
	traces        bool     // runs a command after options the guard need not know: each operand is tried as its start
}

func (p pidRule) judge(a *analyzer, args []string) *Hit {
	o := shell.Parse(args, p.short, p.long...)
	if o.Has(p.deny...) {
		return procHit(a, cmp.Or(p.why, signalsByName))
	}
	if h := a.each(o.Val(p.out...), under); h != nil {
		return h
	}
	for i := 0; p.traces && i < len(args); i++ {
		if strings.HasPrefix(args[i], "-") || i > 0 && (args[i-1] == "-o" || args[i-1] == "--output") {
			continue // an option, or its output file, judged above
		}
		if h := a.run(args[i:]); h != nil {
			return h
		}
	}
	if p.wraps != "" && !o.Has(p.pidOpts...) {
		h, _ := a.unwrap(p.wraps, args)
		return h
	}
	pids := o.Val(p.pidOpts...)
	if p.ops != nil {
		pids = append(pids, p.ops(o)...)
	}
	return cmp.Or(a.pids(pids, p.verb, true), first(o.Val(p.names...), func(w string) *Hit { return a.pattern(w, false, true, false) }))
}

// processRules judge the programs acting on processes, before the wrappers (ionice and the like wrap a command unless given a pid).
var processRules = map[string]rule{
	"kill": killRule, "pkill": pkillRule, "killall5 skill snice": alwaysProcess, "gdb": gdbRule,
	"prlimit": pidRule{verb: "limit the resources of", short: "+p", long: []string{"pid"}, pidOpts: []string{"p", "pid"}, wraps: "prlimit"}.judge,
	"renice": pidRule{verb: "change the priority of", short: "n", long: []string{"priority"}, deny: []string{"g", "u", "pgrp", "user"},
		ops: func(o shell.Opts) []string { return afterFirst(o, "n", "priority") }}.judge,
	"ionice":  pidRule{verb: "change the scheduling of", short: "cnpPu", pidOpts: []string{"p"}, deny: []string{"P", "u"}, ops: allOps, wraps: "ionice"}.judge,
	"taskset": pidRule{verb: "change the processor affinity of", pidOpts: []string{"p", "pid"}, ops: lastOp, wraps: "taskset"}.judge,
	"chrt": pidRule{verb: "change the scheduling of", short: "TPD", long: []string{"sched-runtime", "sched-period", "sched-deadline"},
		pidOpts: []string{"p", "pid"}, ops: lastOp, wraps: "chrt"}.judge,
	"strace": pidRule{verb: "attach to", short: "po", long: []string{"attach", "output"}, pidOpts: []string{"p", "attach"},
		out: []string{"o", "output"}, traces: true}.judge,
	"ltrace": pidRule{verb: "attach to", short: "po", long: []string{"output"}, pidOpts: []string{"p"}, out: []string{"o", "output"}, traces: true}.judge,
	"perf": pidRule{verb: "attach to", short: "po", long: []string{"pid", "output"}, pidOpts: []string{"p", "pid"},
		out: []string{"o", "output"}, traces: true}.judge,
	"criu":                       pidRule{verb: "attach to", short: "t", long: []string{"tree"}, pidOpts: []string{"t", "tree"}}.judge,
	"gcore pstack reptyr gstack": pidRule{verb: "attach to", short: "o", ops: allOps}.judge,
	"cgclassify":                 pidRule{verb: "move into another cgroup", short: "g", ops: allOps}.judge,
	"cpulimit": pidRule{verb: "limit", short: "pelc", long: []string{"pid", "exe", "path", "limit", "cpu"},
		pidOpts: []string{"p", "pid"}, names: []string{"e", "exe", "path"}}.judge,
	"fuser": pidRule{short: "n", deny: []string{"k", "kill"}, why: "fuser -k kills whatever has the file open, which can be stopgate's client or hooks"}.judge,
	"killall": func(a *analyzer, args []string) *Hit {
		o := shell.Parse(noSignal(args), "snuoy", "signal", "user", "older-than", "younger-than")
		if len(o.Ops) == 0 && o.Has("u", "user") {
			return alwaysProcess(a, nil)
		}
		return first(o.Ops, func(w string) *Hit { return a.pattern(w, false, !o.Has("r", "regexp"), o.Has("I", "ignore-case")) })
	},
}

func allOps(o shell.Opts) []string { return o.Ops }
func lastOp(o shell.Opts) []string { return o.Ops[max(0, len(o.Ops)-1):] }

// procPath judges a write to /proc/PID/ or the cgroup filesystem, which can freeze or starve the client without a signal.
func (a *analyzer) procPath(p string) *Hit {
	if !strings.HasPrefix(p, "/") {
		if a.cwd == "" {
			return nil
		}
		p = shell.Abs(p, a.cwd)
	}
	if shell.Within(p, "/sys/fs/cgroup") {
		return procHit(a, "it would write the cgroup filesystem, which can freeze or limit stopgate's client and hooks")
	}
	if rest, ok := strings.CutPrefix(p, "/proc/"); ok {
		pid, _, _ := strings.Cut(rest, "/")
		if n, err := strconv.Atoi(pid); err == nil {
			return a.pidNumber(n, "write the process files of")
		}
	}
	return nil
}

// launchers run a program named among their arguments (npx gate, go run …/cmd/gate).
var launchers = strings.Fields("npx npm pnpx pnpm yarn bunx bun node nodejs go")

// gateCall returns gate's arguments if ws runs gate, from any folder or as the first word named gate after a launcher.
func gateCall(ws []string) ([]string, bool) {
	if isGate(ws[0]) {
		return ws[1:], true
	}
	for i := 1; i < len(ws) && slices.Contains(launchers, path.Base(ws[0])); i++ {
		if !strings.HasPrefix(ws[i], "-") && isGate(ws[i]) {
			return ws[i+1:], true
		}
	}
	return nil, false
}

func isGate(text string) bool {
	name, _, _ := strings.Cut(path.Base(text), "@")
	return strings.TrimSuffix(name, ".js") == "gate"
}
