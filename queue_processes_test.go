package stopgate_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stopgate/stopgate/internal/queue"
)

// These tests run detect and gate as real processes (this test binary,
// installed on $PATH by testscript.Main as each command) against one state
// dir, the way parallel tool calls, subagents and stops meet in a session.
// Their assertions are about outcomes only, never about timing.

// procHook is a command started with its input held back, so that many
// can be released at once.
type procHook struct {
	cmd            *exec.Cmd
	stdin          []byte
	stdout, stderr bytes.Buffer
}

func procStart(t *testing.T, root, name string, input []byte) *procHook {
	t.Helper()
	p := &procHook{cmd: exec.Command(name), stdin: input}
	p.cmd.Dir = root
	// These tests claim that nothing is lost however many writers meet, not
	// how long one waits: 200 processes on 2 busy cores can queue for the
	// lock longer than the hooks' own deadline (queue.DefaultWait),
	// which gate_fault_lock_held proves on its own.
	p.cmd.Env = append(os.Environ(), "CLAUDE_PROJECT_DIR="+root, queue.WaitEnv+"=2m")
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	return p
}

// procRunAll starts every process, each blocked on reading its input, then
// hands them all their input at once and waits for them.
func procRunAll(t *testing.T, procs []*procHook) {
	t.Helper()
	pipes := make([]io.WriteCloser, len(procs))
	for i, p := range procs {
		w, err := p.cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		pipes[i] = w
	}
	for i, p := range procs {
		pipes[i].Write(p.stdin)
		pipes[i].Close()
	}
	for i, p := range procs {
		if err := p.cmd.Wait(); err != nil {
			t.Errorf("process %d: %v: %s", i, err, p.stderr.String())
		}
	}
}

func procReadEvent(root, session, agent, prompt string) []byte {
	ev := map[string]any{
		"session_id": session, "cwd": root, "hook_event_name": "PostToolUse", "tool_name": "Read",
		"tool_input": map[string]any{"file_path": filepath.Join(root, "src", "prompts", prompt+".md")},
	}
	if agent != "" {
		ev["agent_id"], ev["agent_type"] = agent, "general-purpose"
	}
	b, _ := json.Marshal(ev)
	return b
}

func procStopEvent(root, session string) []byte {
	b, _ := json.Marshal(map[string]any{"session_id": session, "cwd": root, "hook_event_name": "Stop", "stop_hook_active": false})
	return b
}

// procProject writes mappings.toml with one mapping per prompt, each with
// its own validator run as `run`, and the prompts' files.
func procProject(t *testing.T, root string, prompts []string, run string, files map[string]string) {
	t.Helper()
	var b strings.Builder
	for _, p := range prompts {
		fmt.Fprintf(&b, "[[mapping]]\nprompt = %q\nvalidators = [\"v-%s\"]\n\n", p, p)
	}
	for _, p := range prompts {
		fmt.Fprintf(&b, "[validators.v-%s]\nrun = %q\n\n", p, run)
	}
	files["mappings.toml"] = b.String()
	for _, p := range prompts {
		files["src/prompts/"+p+".md"] = "# " + p + "\n"
	}
	for name, text := range files {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// procEntries reads every file under the state dir's sessions folder: each must
// be a whole entry in its own scope's folder, or the baseline beside one,
// and nothing else may lie there.
func procEntries(t *testing.T, root string) map[string]queue.Entry {
	t.Helper()
	dir := filepath.Join(root, "tmp", "validation", "sessions")
	got := map[string]queue.Entry{}
	var baselines []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		parts := strings.Split(rel, string(filepath.Separator))
		if len(parts) != 3 || !strings.HasSuffix(parts[2], ".json") {
			if len(parts) == 3 && parts[2] == "blocks" {
				return nil
			}
			if len(parts) == 3 && strings.HasSuffix(parts[2], ".baseline") {
				baselines = append(baselines, path)
				return nil
			}
			return fmt.Errorf("stray file %s", rel)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var e queue.Entry
		if err := json.Unmarshal(data, &e); err != nil {
			return fmt.Errorf("torn entry %s: %v", rel, err)
		}
		scope := "main"
		if e.AgentID != "" {
			scope = "agent-" + queue.Segment(e.AgentID)
		}
		if parts[0] != queue.Segment(e.Session) || parts[1] != scope || parts[2] != queue.Segment(e.Prompt)+".json" {
			return fmt.Errorf("entry %+v in the wrong place: %s", e, rel)
		}
		got[e.Session+" "+e.AgentID+" "+e.Prompt] = e
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, b := range baselines {
		if _, err := os.Stat(strings.TrimSuffix(b, ".baseline") + ".json"); err != nil {
			t.Fatalf("stray baseline %s: %v", b, err)
		}
	}
	return got
}

// TestDetectProcessesLoseNothing runs 200 detect processes at once against
// one state dir, in five sessions, each with its main thread and two
// subagents: every armed (session, scope, prompt) has exactly one whole
// entry, counting every arm, and exactly one process announced it.
func TestDetectProcessesLoseNothing(t *testing.T) {
	root := t.TempDir()
	var prompts []string
	for i := range 10 {
		prompts = append(prompts, fmt.Sprintf("p%d", i))
	}
	procProject(t, root, prompts, "true", map[string]string{})

	type arm struct{ session, agent, prompt string }
	var combos []arm
	for s := range 5 {
		for _, agent := range []string{"", "agent-a", "agent-b"} {
			for _, p := range prompts {
				combos = append(combos, arm{fmt.Sprintf("session-%d", s), agent, p})
			}
		}
	}
	const processes = 200 // the first 50 combos are armed twice
	var procs []*procHook
	for i := range processes {
		c := combos[i%len(combos)]
		procs = append(procs, procStart(t, root, "detect", procReadEvent(root, c.session, c.agent, c.prompt)))
	}
	procRunAll(t, procs)

	announced := map[arm]int{}
	for i, p := range procs {
		if p.stdout.Len() > 0 {
			announced[combos[i%len(combos)]]++
		}
	}
	got := procEntries(t, root)
	if len(got) != len(combos) {
		t.Errorf("%d entries, want %d", len(got), len(combos))
	}
	for i, c := range combos {
		want := 1
		if i < processes-len(combos) {
			want = 2
		}
		e, ok := got[c.session+" "+c.agent+" "+c.prompt]
		switch {
		case !ok:
			t.Errorf("%v: entry lost", c)
		case e.Arms != want:
			t.Errorf("%v: arms = %d, want %d", c, e.Arms, want)
		}
		if announced[c] != 1 {
			t.Errorf("%v: announced by %d processes, want 1", c, announced[c])
		}
	}
}

// procRecordScript is a validator that passes after appending its prompt and
// its entry's arm count, as the queue holds it while the validator runs,
// to validated.log.
const procRecordScript = `f="tmp/validation/sessions/$STOPGATE_SESSION_ID/main/$STOPGATE_PROMPT.json"
arms=$(sed -n 's/.*"arms": *\([0-9]*\).*/\1/p' "$f")
echo "$STOPGATE_PROMPT ${arms:-missing}" >> validated.log
`

// TestGateDrainsWhileDetectsWrite runs gates one after another on a
// session while detect processes arm its prompts, some twice, then one
// last gate. Nothing is lost or run twice: a prompt armed once is
// validated exactly once; one armed twice is validated at most twice, and
// once only if both arms came before it (an entry re-armed after a gate's
// snapshot survives that gate); the queue ends empty.
func TestGateDrainsWhileDetectsWrite(t *testing.T) {
	once, twice := 100, 30
	if testing.Short() {
		once, twice = 40, 10
	}
	root := t.TempDir()
	var prompts, arms []string
	for i := range once {
		prompts = append(prompts, fmt.Sprintf("once%03d", i))
	}
	for i := range twice {
		p := fmt.Sprintf("twice%03d", i)
		prompts, arms = append(prompts, p), append(arms, p)
	}
	arms = append(arms, prompts...)
	procProject(t, root, prompts, "sh record.sh", map[string]string{"record.sh": procRecordScript})
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	rng.Shuffle(len(arms), func(i, j int) { arms[i], arms[j] = arms[j], arms[i] })

	// Detects, eight at a time.
	done := make(chan struct{})
	jobs := make(chan string)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range jobs {
				procRun(t, root, "detect", procReadEvent(root, "s1", "", p))
			}
		}()
	}
	go func() {
		for _, p := range arms {
			jobs <- p
		}
		close(jobs)
		wg.Wait()
		close(done)
	}()

	// Gates, one at a time, as a session's stops come.
	gates := 0
	for draining := true; draining; {
		select {
		case <-done:
			draining = false // and one last gate
		default:
		}
		if out := procRun(t, root, "gate", procStopEvent(root, "s1")); out != "" {
			t.Fatalf("gate %d: %s", gates, out)
		}
		gates++
	}
	t.Logf("%d arms by %d detects, drained by %d gates", len(arms), len(arms), gates)

	if left := procEntries(t, root); len(left) != 0 {
		t.Errorf("%d entries left after the last gate", len(left))
	}
	data, err := os.ReadFile(filepath.Join(root, "validated.log"))
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string][]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		p, n, _ := strings.Cut(line, " ")
		a, err := strconv.Atoi(n)
		if err != nil {
			t.Fatalf("validated.log: %q", line)
		}
		runs[p] = append(runs[p], a)
	}
	for _, p := range prompts {
		got := runs[p]
		sort.Ints(got)
		switch {
		case strings.HasPrefix(p, "once") && len(got) != 1:
			t.Errorf("%s, armed once, validated %d times", p, len(got))
		case strings.HasPrefix(p, "twice") && (len(got) < 1 || len(got) > 2):
			t.Errorf("%s, armed twice, validated %d times", p, len(got))
		case strings.HasPrefix(p, "twice") && len(got) == 1 && got[0] != 2:
			// Validated once, so both arms must have come before that one
			// validation: a second arm after it would have been validated
			// again, in the same entry or a new one.
			t.Errorf("%s: its second arm was never validated (arm counts seen: %v)", p, got)
		}
	}
}

// procRun runs a hook to completion and returns its stdout; it must exit 0.
func procRun(t *testing.T, root, name string, input []byte) string {
	p := procStart(t, root, name, input)
	p.cmd.Stdin = bytes.NewReader(input)
	if err := p.cmd.Run(); err != nil {
		t.Errorf("%s: %v: %s", name, err, p.stderr.String())
	}
	return p.stdout.String()
}

// procSlowScript fails fast once the file "fail" exists; until then it says it
// started, with the id of its process group, and sleeps.
const procSlowScript = `if [ -f fail ]; then echo "still broken"; exit 1; fi
echo $$ > started.tmp && mv started.tmp started
exec sleep 60
`

// TestGateKilledMidRun kills the gate with SIGKILL while its validator
// runs: the entry stays pending, and the next stop's gate sees it and
// judges it.
func TestGateKilledMidRun(t *testing.T) {
	root := t.TempDir()
	procProject(t, root, []string{"slow"}, "sh slow.sh", map[string]string{"slow.sh": procSlowScript})
	if out := procRun(t, root, "detect", procReadEvent(root, "s1", "", "slow")); !strings.Contains(out, "additionalContext") {
		t.Fatalf("detect did not arm: %q", out)
	}

	gate := procStart(t, root, "gate", procStopEvent(root, "s1"))
	gate.cmd.Stdin = bytes.NewReader(gate.stdin)
	if err := gate.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	started := filepath.Join(root, "started")
	pgid := 0
	for deadline := time.Now().Add(time.Minute); pgid == 0; time.Sleep(5 * time.Millisecond) {
		if data, err := os.ReadFile(started); err == nil {
			pgid, _ = strconv.Atoi(strings.TrimSpace(string(data)))
		}
		if time.Now().After(deadline) {
			gate.cmd.Process.Kill()
			t.Fatalf("the validator never started; gate said %s", gate.stderr.String())
		}
	}
	gate.cmd.Process.Kill()
	gate.cmd.Wait()
	// The validator's group outlives the gate: end it as the test's own.
	if pgid > 0 {
		syscall.Kill(-pgid, syscall.SIGKILL)
	}
	if gate.stdout.Len() > 0 {
		t.Fatalf("a killed gate answered: %s", gate.stdout.String())
	}
	if got := procEntries(t, root); len(got) != 1 {
		t.Fatalf("after the kill, entries = %v, want the one pending", got)
	}

	if err := os.WriteFile(filepath.Join(root, "fail"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out := procRun(t, root, "gate", procStopEvent(root, "s1"))
	for _, want := range []string{`"decision":"block"`, `prompt \"slow\"`, "still broken"} {
		if !strings.Contains(out, want) {
			t.Errorf("the next gate's answer lacks %s: %s", want, out)
		}
	}
	if got := procEntries(t, root); len(got) != 1 {
		t.Errorf("after the blocked stop, entries = %v, want the one pending", got)
	}
}
