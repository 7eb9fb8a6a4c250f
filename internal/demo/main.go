// Command demo shows stopgate's main job on a copy of the example project:
// it feeds bin/detect and bin/gate the hook events Claude Code sends (shapes
// in testdata/events) and prints what the agent and the user would see.
//
//	go run ./internal/demo [-bin DIR]
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/stopgate/stopgate/internal/example"
)

func main() {
	bin := flag.String("bin", "bin", "directory holding detect and gate")
	flag.Parse()
	if err := run(*bin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

type demo struct {
	bin, root, home string
	w               io.Writer
	step            int
	err             error
}

// run plays the demo with the binaries in bin, from the repo root.
func run(bin string, w io.Writer) error {
	abs, err := filepath.Abs(bin)
	if err != nil {
		return err
	}
	root, err := os.MkdirTemp("", "stopgate-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	if err := example.Copy(".", root); err != nil {
		return fmt.Errorf("copying the example project: %w", err)
	}
	if err := git(root, "init", "-q"); err != nil {
		return err
	}
	git(root, "-c", "user.name=demo", "-c", "user.email=demo@example.com", "commit", "-q", "--allow-empty", "-m", "start")
	d := &demo{bin: abs, root: root, home: filepath.Join(root, ".home"), w: w}
	// Claude Code keeps its own record of the session, which the gate reads
	// at every stop (the session and path of testdata/events).
	record := filepath.Join(d.home, ".claude/projects/demo/9f0c6d2e-5b7a-4c1e-8d3f-2a6b1c0e9d47.jsonl")
	if err := os.MkdirAll(filepath.Dir(record), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(record, nil, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(w, "stopgate demo on a copy of the example project in %s\n", root)

	d.say("The agent reads the mapped prompt src/prompts/joke.md (PostToolUse Read).")
	d.hook("detect", "read-joke.json")
	d.say("The agent tries to stop without writing the joke (Stop).")
	d.hook("gate", "stop.json")
	d.say("The agent writes output/joke.txt as the remediation text says.")
	os.MkdirAll(filepath.Join(root, "output"), 0o755)
	os.WriteFile(filepath.Join(root, "output/joke.txt"), []byte("Why do programmers prefer dark mode? Because light attracts bugs.\n"), 0o644)
	d.say("The agent stops again (Stop, stop_hook_active: true).")
	d.hook("gate", "stop-again.json")

	d.say("The user runs /git-worktrees-create: a slash command arms a run validator, no Read needed (UserPromptExpansion).")
	d.hook("detect", "expand-worktree.json")
	d.say("The agent stops before creating the worktree: validators/validate-worktree.sh fails.")
	d.hook("gate", "stop.json")
	d.say("The agent creates the worktree, then stops again.")
	if err := git(root, "worktree", "add", "-q", "-b", "feature/stopgate-demo", ".worktrees/stopgate-demo"); err != nil {
		return err
	}
	d.hook("gate", "stop-again.json")
	fmt.Fprintln(w, "\nThat is the whole loop: read → armed → blocked with the fix → fixed → stop allowed.")
	return d.err
}

// replied appends to the session's record the reply a stop follows, as
// Claude Code writes it before the stop: the gate waits for it.
func replied(in string) error {
	var ev struct {
		Record string `json:"transcript_path"`
		Reply  string `json:"last_assistant_message"`
	}
	if err := json.Unmarshal([]byte(in), &ev); err != nil || ev.Reply == "" {
		return err
	}
	line, err := json.Marshal(map[string]any{"type": "assistant", "message": map[string]any{
		"role": "assistant", "content": []map[string]string{{"type": "text", "text": ev.Reply}}}})
	if err != nil {
		return err
	}
	f, err := os.OpenFile(ev.Record, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.Write(append(line, '\n'))
	return errors.Join(err, f.Close())
}

func (d *demo) say(s string) {
	d.step++
	fmt.Fprintf(d.w, "\n%d. %s\n", d.step, s)
}

// hook runs a stopgate binary on an event file and explains its answer the
// way the client acts on it.
func (d *demo) hook(name, event string) {
	data, err := os.ReadFile(filepath.Join("testdata/events", event))
	if err != nil {
		d.err = err
		return
	}
	in := strings.NewReplacer("{{ROOT}}", d.root, "{{HOME}}", d.home).Replace(string(data))
	if err := replied(in); err != nil {
		d.err = err
		return
	}
	cmd := exec.Command(filepath.Join(d.bin, name))
	cmd.Dir = d.root
	cmd.Env = append(os.Environ(), "CLAUDE_PROJECT_DIR="+d.root)
	cmd.Stdin = strings.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if err != nil && cmd.ProcessState == nil {
		d.err = err
		return
	}
	fmt.Fprintf(d.w, "   $ %s < testdata/events/%s   → exit %d\n", name, event, cmd.ProcessState.ExitCode())
	if stderr.Len() > 0 {
		fmt.Fprintf(d.w, "   stderr: %s", stderr.String())
	}
	if stdout.Len() == 0 {
		if err == nil {
			fmt.Fprintln(d.w, "   (no output: the client carries on; for a stop, the agent may stop)")
		}
		return
	}
	var out struct {
		Continue           *bool  `json:"continue"`
		StopReason         string `json:"stopReason"`
		Decision           string `json:"decision"`
		Reason             string `json:"reason"`
		HookSpecificOutput *struct {
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		fmt.Fprintf(d.w, "   stdout: %s", stdout.String())
		return
	}
	fmt.Fprintf(d.w, "   stdout: %s", truncate(stdout.String(), 160))
	switch {
	case out.Decision == "block":
		fmt.Fprintln(d.w, "   The stop is blocked; the model receives:")
		d.indent(out.Reason)
	case out.Continue != nil && !*out.Continue:
		fmt.Fprintln(d.w, "   The session halts; the user sees:")
		d.indent(out.StopReason)
	case out.HookSpecificOutput != nil:
		fmt.Fprintln(d.w, "   Added to the model's context:")
		d.indent(out.HookSpecificOutput.AdditionalContext)
	}
}

func (d *demo) indent(s string) {
	for _, line := range strings.Split(s, "\n") {
		fmt.Fprintln(d.w, "   │ "+line)
	}
}

func truncate(s string, n int) string {
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…\n"
	}
	return s + "\n"
}

func git(dir string, args ...string) error {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return nil
}
