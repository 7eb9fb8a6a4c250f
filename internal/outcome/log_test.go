package outcome

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

func TestAppendRead(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2025, 1, 2, 10, 0, 0, 0, time.UTC)
	for i := range 3 {
		r := Record{Time: t0.Add(time.Duration(i) * time.Hour), Session: "s", Prompts: []string{"p"}, Decision: Pass,
			Checks: []Check{{Name: "v", Prompts: []string{"p"}, Passed: true, Result: "passed", DurationMS: Millis(1500 * time.Microsecond)}}}
		if err := Append(dir, r); err != nil {
			t.Fatal(err)
		}
	}
	rs, skipped, err := Read(dir, t0.Add(time.Hour))
	if err != nil || skipped != 0 || len(rs) != 2 {
		t.Fatalf("Read since 1h = %d records, %d skipped, %v; want 2, 0", len(rs), skipped, err)
	}
	if d := rs[0].Checks[0].Duration(); d != 1500*time.Microsecond {
		t.Errorf("duration round trip: %v", d)
	}
	if rs, _, err := Read(t.TempDir(), time.Time{}); err != nil || len(rs) != 0 {
		t.Errorf("Read of a dir with no log = %v, %v", rs, err)
	}
}

// A line torn by a killed writer is skipped, and the next append starts on
// a line of its own.
func TestTornLine(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	if err := os.WriteFile(path, []byte(`{"time":"2025-01-02T10:00:00Z","session_id":"s","deci`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Append(dir, Record{Time: time.Now(), Session: "s2", Decision: Block}); err != nil {
		t.Fatal(err)
	}
	rs, skipped, err := Read(dir, time.Time{})
	if err != nil || skipped != 1 || len(rs) != 1 || rs[0].Session != "s2" {
		t.Fatalf("Read = %+v, %d skipped, %v; want the new record and 1 skipped", rs, skipped, err)
	}
}

func TestRotate(t *testing.T) {
	defer func(n int64) { MaxSize = n }(MaxSize)
	MaxSize = 200
	dir := t.TempDir()
	for i := range 10 {
		if err := Append(dir, Record{Time: time.Now(), Session: strconv.Itoa(i), Decision: Pass}); err != nil {
			t.Fatal(err)
		}
	}
	st, err := os.Stat(filepath.Join(dir, FileName))
	if err != nil || st.Size() > MaxSize+200 {
		t.Fatalf("log not rotated: %v, %v", st, err)
	}
	if _, err := os.Stat(filepath.Join(dir, FileName+".1")); err != nil {
		t.Fatalf("no rotated log: %v", err)
	}
	rs, skipped, err := Read(dir, time.Time{})
	if err != nil || skipped != 0 || len(rs) == 0 || rs[len(rs)-1].Session != "9" {
		t.Fatalf("Read after rotation = %d records, %d skipped, %v", len(rs), skipped, err)
	}
}

// Many gate processes appending at once lose no record and tear no line,
// across a rotation. The test binary re-executes itself as the writers.
func TestConcurrentAppend(t *testing.T) {
	if dir := os.Getenv("OUTCOME_TEST_WRITER_DIR"); dir != "" {
		MaxSize, _ = strconv.ParseInt(os.Getenv("OUTCOME_TEST_MAX_SIZE"), 10, 64)
		id := os.Getenv("OUTCOME_TEST_WRITER_ID")
		for i := range 25 {
			r := Record{Time: time.Now(), Session: id, Prompts: []string{strconv.Itoa(i)}, Decision: Block,
				Checks: []Check{{Name: "a-validator-with-a-long-name", Prompts: []string{"p"}, Result: "exit status 1"}}}
			if err := Append(dir, r); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}
		os.Exit(0)
	}
	const writers, each = 16, 25
	dir := t.TempDir()
	// Exactly one rotation, in the middle: past it the older half is the
	// rotated log, and a second rotation would drop it.
	sample, _ := json.Marshal(Record{Time: time.Now(), Session: "10", Prompts: []string{"10"}, Decision: Block,
		Checks: []Check{{Name: "a-validator-with-a-long-name", Prompts: []string{"p"}, Result: "exit status 1"}}})
	maxSize := strconv.Itoa((len(sample) + 1) * writers * each * 6 / 10)
	var cmds []*exec.Cmd
	for w := range writers {
		cmd := exec.Command(os.Args[0], "-test.run=^TestConcurrentAppend$")
		cmd.Env = append(os.Environ(), "OUTCOME_TEST_WRITER_DIR="+dir, "OUTCOME_TEST_WRITER_ID="+strconv.Itoa(w), "OUTCOME_TEST_MAX_SIZE="+maxSize)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("writer: %v", err)
		}
	}
	rs, skipped, err := Read(dir, time.Time{})
	if err != nil || skipped != 0 {
		t.Fatalf("Read: %v, %d torn lines", err, skipped)
	}
	seen := map[string]int{}
	for _, r := range rs {
		seen[r.Session+"/"+r.Prompts[0]]++
	}
	if len(rs) != writers*each || len(seen) != writers*each {
		t.Fatalf("%d records, %d distinct; want %d of each", len(rs), len(seen), writers*each)
	}
	if _, err := os.Stat(filepath.Join(dir, FileName+".1")); err != nil {
		t.Errorf("expected one rotation: %v", err)
	}
}

// BenchmarkAppend is the outcome log's cost on the gate's path, per
// decision with three validators.
func BenchmarkAppend(b *testing.B) {
	dir := b.TempDir()
	r := Record{Time: time.Now(), Event: "Stop", Session: "9f0c6d2e-5b7a-4c1e-8d3f-2a6b1c0e9d47", Prompts: []string{"joke", "git/worktrees/create"}, Decision: Block, Blocks: 1,
		Checks: []Check{
			{Name: "joke-file", Prompts: []string{"joke"}, Passed: true, Result: "passed", DurationMS: 0.04},
			{Name: "joke-short", Prompts: []string{"joke"}, Passed: true, Result: "passed", DurationMS: 0.03},
			{Name: "worktree", Prompts: []string{"git/worktrees/create"}, Result: "exit status 1", DurationMS: 8.2},
		}}
	for b.Loop() {
		if err := Append(dir, r); err != nil {
			b.Fatal(err)
		}
	}
}
