package stop

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/guard"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/project"
	"github.com/stopgate/stopgate/internal/queue"
	"github.com/stopgate/stopgate/internal/regular"
	"github.com/stopgate/stopgate/internal/transcript"
)

// Missing config: the record decides. With mappings.toml gone (or empty)
// the gate cannot tell which reads are mapped, and the state dir that
// held the queue and the config cache may be gone with it (`ls | xargs
// rm -rf` removes both). So, in a project that uses stopgate, the stop
// halts when the session's record since its last passing stop shows the
// agent took up anything that can be a prompt:
//
//   - a Read of a Markdown file inside the project (any prompts_dir the
//     lost config may have named, .claude/commands, .claude/skills);
//   - a slash command or Skill run whose file is in the project's
//     .claude/commands or .claude/skills, or whose name has a ':' (a
//     nested or a plugin's command: the client's own commands have none).
//
// "Since its last passing stop" is the reconciliation mark of the default
// state dir when it survived and holds against the transcript, else the
// whole transcript (bounded by transcript.MaxScan: bytes it cannot read
// halt too). A project uses stopgate when its state dir exists, one of its
// hook files names the gate, or the record shows stopgate at work (its
// announcements and blocks start "stopgate:"): a gate registered for every
// project (a plugin) passes the stops of a project without stopgate.

// missingConfig handles a project whose mappings.toml is gone or empty.
// It creates nothing: a project without stopgate keeps no state dir.
func (s *judging) missingConfig() (*Verdict, error) {
	stateDir := filepath.Join(s.root, config.DefaultStateDir)
	q := queue.Open(stateDir)
	entries, _, err := q.Snapshot(s.scope)
	if err != nil {
		return nil, err
	}
	if len(entries) > 0 {
		s.armed = entries
		return halt(fmt.Sprintf(
			"stopgate: %s is missing, but %d prompt(s) are pending for this session; restore it (the agent must not remove its own gate)",
			project.ConfigName, len(entries))), nil
	}
	taken, err := s.takenUp(q, stateDir)
	if err != nil {
		return nil, err
	}
	if taken == "" {
		s.clear = true
		return &Verdict{}, nil
	}
	return halt(fmt.Sprintf(
		"stopgate: %s is missing or empty, and the session's transcript shows %s since its last passing stop: what it arms cannot be told without the config. Restore %s (git checkout %s) and continue the session; the agent must not remove its own gate. (To remove stopgate from the project, remove its hooks too.)",
		project.ConfigName, taken, project.ConfigName, project.ConfigName)), nil
}

// takenUp names the first thing the scope's record shows the agent taking
// up that can be a prompt, "" for none or a project that does not use
// stopgate. An unreadable transcript is an error.
func (s *judging) takenUp(q *queue.Queue, stateDir string) (string, error) {
	record, path, thread := recordOf(s.in, s.scope)
	if path == "" {
		return "", nil
	}
	from, _ := trustedMark(q.Mark(s.scope), path)
	scan := func() (*transcript.Result, error) { return record.Scan(path, from.Offset, thread, s.in.Cwd) }
	res, err := scan()
	caught := true
	// A record behind the client is waited for only in a project that
	// uses stopgate: another project's stops would pay the wait for nothing.
	if err == nil && !current(s.in, res, false) && usesStopgate(s.root, stateDir, path, res.From) {
		res, caught, err = awaitRecord(scan, s.in, false, s.deadline.At)
	}
	if os.IsNotExist(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading the transcript: %w", err)
	}
	taken := ""
	for _, ev := range res.Events {
		if taken = promptLike(s.root, ev, s.scope); taken != "" {
			break
		}
	}
	switch {
	case taken != "":
	case res.Skipped > 0:
		taken = fmt.Sprintf("%.1f MiB it could not read", float64(res.Skipped)/(1<<20))
	case !caught:
		taken = "less than the client wrote (not the reply this stop follows, in time)"
	}
	// Asked last: the transcript's words cost a second read.
	if taken == "" || !usesStopgate(s.root, stateDir, path, res.From) {
		return "", nil
	}
	return taken, nil
}

// promptLike says what ev took up when it can be a prompt, else "".
func promptLike(root string, ev transcript.Event, scope queue.Scope) string {
	switch ev.Kind {
	case transcript.Read:
		rel, inside := project.Rel(root, ev.Path)
		if inside && strings.EqualFold(filepath.Ext(rel), ".md") {
			return "a read of " + rel
		}
	case transcript.Command:
		if commandFile(root, ev.Command) {
			return "the command /" + ev.Command
		}
	case transcript.Prompt:
		if name := hook.SlashCommand(ev.Text); scope.Agent == "" && name != "" && commandFile(root, name) {
			return "the command /" + name
		}
	}
	return ""
}

// commandFile reports whether /name can run a prompt of the project's: a
// namespaced name, or a file under .claude/commands or .claude/skills.
func commandFile(root, name string) bool {
	if strings.Contains(name, ":") {
		return true
	}
	for _, p := range []string{
		filepath.Join(root, ".claude", "commands", name+".md"),
		filepath.Join(root, ".claude", "skills", name, "SKILL.md"),
	} {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}

// usesStopgate reports whether the project shows signs of stopgate: its
// state dir, a hook file naming the gate, or stopgate's words in the
// transcript read from from.
func usesStopgate(root, stateDir, path string, from int64) bool {
	if _, err := os.Stat(stateDir); err == nil {
		return true
	}
	for _, m := range guard.ClientFiles() { // a mention of the gate in one says the project uses it
		if data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(m))); err == nil && bytes.Contains(data, []byte("/gate")) {
			return true
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return true // it was readable a moment ago: err towards judging
	}
	defer f.Close()
	data, err := io.ReadAll(io.NewSectionReader(f, from, transcript.MaxScan))
	return err != nil || bytes.Contains(data, []byte("stopgate:"))
}

// emptyConfig reports whether the config file holds nothing but blanks:
// the same as missing, for the record rule.
func emptyConfig(file string) bool {
	f, fi, err := regular.Open(file)
	if err != nil {
		return false // a named pipe is not empty: reading it would hold the stop
	}
	defer f.Close()
	if fi.Size() > 4<<10 {
		return false
	}
	data, err := io.ReadAll(f)
	return err == nil && len(bytes.TrimSpace(data)) == 0
}
