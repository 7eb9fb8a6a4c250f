package queue

import (
	"bufio"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// writerEnv, when set to a state dir, makes this test binary a writer that
// enqueues into it in a tight loop until it is killed.
const writerEnv = "STOPGATE_QUEUE_CRASH_WRITER"

var (
	crashSessions = []string{"s1", "s2", "s/3"}
	crashAgents   = []string{"", "a1", "a2", "a 3"}
	crashPrompts  = []string{"joke", "git/worktrees/create", "p3", "p4", "p5"}
)

// TestEnqueueKilledMidWrite kills a writer at random points of its
// enqueues, again and again, and after each kill checks what the next
// reader and writer see: every entry parses whole (nothing partial is ever
// visible), the lock is free, and any temp file the kill left is swept by
// the next enqueue into its folder.
func TestEnqueueKilledMidWrite(t *testing.T) {
	if dir := os.Getenv(writerEnv); dir != "" {
		writeUntilKilled(dir)
		return
	}
	kills, lanes := 1000, 4
	if testing.Short() {
		kills = 200
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)

	var mu sync.Mutex
	var swept, total int
	var wg sync.WaitGroup
	for lane := range lanes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(lane)))
			dir := t.TempDir()
			for i := lane; i < kills; i += lanes {
				if err := killWriter(dir, time.Duration(rng.IntN(2000))*time.Microsecond); err != nil {
					t.Errorf("kill %d: %v", i, err)
					return
				}
				n, err := checkAfterKill(dir)
				if err != nil {
					t.Errorf("after kill %d: %v", i, err)
					return
				}
				mu.Lock()
				swept += n
				total++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	// How often a kill landed between a temp file's creation and its
	// rename depends on the machine: reported, not asserted.
	t.Logf("%d writers killed; %d left a temp file, swept by the next enqueue", total, swept)
}

// killWriter starts a writer on dir, lets it write for delay once it is
// enqueueing, and kills it with SIGKILL.
func killWriter(dir string, delay time.Duration) error {
	cmd := exec.Command(os.Args[0], "-test.run=^TestEnqueueKilledMidWrite$")
	cmd.Env = append(os.Environ(), writerEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "writing\n" {
		cmd.Process.Kill()
		cmd.Wait()
		return fmt.Errorf("writer did not start: %q, %v", line, err)
	}
	time.Sleep(delay)
	cmd.Process.Kill()
	cmd.Wait() // killed: its exit status says so, nothing else to check
	return nil
}

// writeUntilKilled is the writer: it arms every scope and prompt in turn,
// creating and re-arming entries, until it is killed.
func writeUntilKilled(dir string) {
	q := Open(dir)
	os.Stdout.WriteString("writing\n")
	for i := 0; ; i++ {
		e := Entry{
			Session: crashSessions[i%len(crashSessions)], AgentID: crashAgents[i/3%len(crashAgents)],
			Prompt: crashPrompts[i/12%len(crashPrompts)],
			Path:   "/project/src/prompts/" + strings.Repeat("long/", 40) + "prompt.md", Trigger: TriggerRead,
		}
		if e.AgentID != "" {
			e.AgentType = "general-purpose"
		}
		if _, err := q.Enqueue(e, nil); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}

// checkAfterKill is the next reader and writer after a kill. It returns how
// many temp files the kill left.
func checkAfterKill(dir string) (temps int, err error) {
	q := Open(dir)
	// Every entry file parses whole; temp files are the only leftovers.
	var left []string
	err = filepath.WalkDir(filepath.Join(dir, "sessions"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		switch name := d.Name(); {
		case strings.HasPrefix(name, TempPrefix):
			left = append(left, path)
		case strings.HasSuffix(name, ".json"):
			var e Entry
			if err := ReadJSON(path, &e); err != nil {
				return fmt.Errorf("torn entry %s: %w", path, err)
			}
			if e.ID == "" || e.Arms < 1 || e.Prompt != Unsegment(strings.TrimSuffix(name, ".json")) {
				return fmt.Errorf("entry %s is not whole: %+v", path, e)
			}
		case name == "blocks":
		default:
			return fmt.Errorf("stray file %s", path)
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		return 0, err
	}
	// The next enqueue into a folder with a temp file sweeps it.
	for _, tmp := range left {
		s, err := scopeOfTemp(dir, tmp)
		if err != nil {
			return 0, err
		}
		if _, err := q.Enqueue(Entry{Session: s.Session, AgentID: s.Agent, Prompt: "sweeper", Trigger: TriggerRead}, nil); err != nil {
			return 0, fmt.Errorf("the next writer failed: %w", err)
		}
		if _, err := os.Stat(tmp); !os.IsNotExist(err) {
			return 0, fmt.Errorf("temp file %s survived the next enqueue into its folder", tmp)
		}
	}
	// And every scope reads back with nothing set aside.
	for _, s := range crashSessions {
		for _, a := range crashAgents {
			entries, bad, err := q.Snapshot(Scope{Session: s, Agent: a})
			if err != nil {
				return 0, err
			}
			if len(bad) > 0 {
				return 0, fmt.Errorf("snapshot of %s/%s set aside %s: %v", s, a, bad[0].Path, bad[0].Error)
			}
			for _, e := range entries {
				if e.Session != s || e.AgentID != a {
					return 0, fmt.Errorf("entry of %s/%s in the folder of %s/%s", e.Session, e.AgentID, s, a)
				}
			}
		}
	}
	return len(left), nil
}

// scopeOfTemp tells the scope of a file under dir's sessions folder.
func scopeOfTemp(dir, path string) (Scope, error) {
	rel, err := filepath.Rel(filepath.Join(dir, "sessions"), path)
	if err != nil {
		return Scope{}, err
	}
	parts := strings.Split(rel, string(filepath.Separator))
	if len(parts) != 3 {
		return Scope{}, fmt.Errorf("unexpected path %s", path)
	}
	s := Scope{Session: Unsegment(parts[0])}
	if a, ok := strings.CutPrefix(parts[1], "agent-"); ok {
		s.Agent = Unsegment(a)
	}
	return s, nil
}
