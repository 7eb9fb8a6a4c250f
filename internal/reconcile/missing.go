package reconcile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/guard"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/project"
	"github.com/stopgate/stopgate/internal/queue"
	"github.com/stopgate/stopgate/internal/regular"
	"github.com/stopgate/stopgate/internal/transcript"
	"github.com/stopgate/stopgate/internal/trust"
)

// Missing applies the missing-config rule (docs/fail-closed.md): the entries queued in the default
// state dir, else what the record shows taken up that can be a prompt ("": nothing, or no stopgate).
func Missing(root string, in *hook.Input, scope queue.Scope, wait time.Time) (pending []queue.Entry, taken string, err error) {
	stateDir := filepath.Join(root, config.DefaultStateDir)
	q := queue.Open(stateDir)
	pending, _, err = q.Snapshot(scope)
	if err != nil || len(pending) > 0 {
		return pending, "", err
	}
	record, path, thread := recordOf(in, scope)
	if path == "" {
		return nil, "", nil
	}
	from, _ := trustedMark(q.Mark(scope), path)
	scan := func() (*transcript.Result, error) { return record.Scan(path, from.Offset, thread, in.Cwd) }
	res, err := scan()
	uses := func() bool {
		return trust.Marked(in.TranscriptPath, root) || usesStopgate(root, stateDir, path, res.From)
	}
	caught := true
	// Waited for only in a project that uses stopgate: others would pay for nothing.
	if err == nil && !current(in, res, false) && uses() {
		res, caught, err = awaitRecord(scan, in, false, wait)
	}
	if os.IsNotExist(err) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("reading the transcript: %w", err)
	}
	if taken = takenUp(root, res, scope, caught); taken == "" || !uses() { // asked last: a second read
		return nil, "", nil
	}
	return nil, taken, nil
}

// takenUp names the first thing res shows taken up that can be a prompt: an event, bytes unread, a record behind.
func takenUp(root string, res *transcript.Result, scope queue.Scope, caught bool) string {
	for _, ev := range res.Events {
		if taken := promptLike(root, ev, scope); taken != "" {
			return taken
		}
	}
	switch {
	case res.Skipped > 0:
		return fmt.Sprintf("%.1f MiB it could not read", float64(res.Skipped)/(1<<20))
	case !caught:
		return "less than the client wrote (not the reply this stop follows, in time)"
	}
	return ""
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

// commandFile reports whether /name can run a project's prompt: a plugin's name, or a file under .claude/commands or skills.
func commandFile(root, name string) bool {
	exists := func(p ...string) bool {
		_, err := os.Stat(filepath.Join(p...))
		return err == nil
	}
	return strings.Contains(name, ":") || exists(root, ".claude", "commands", name+".md") || exists(root, ".claude", "skills", name, "SKILL.md")
}

// usesStopgate reports signs of stopgate: its state dir, a hook naming the gate, "stopgate:" in the transcript.
func usesStopgate(root, stateDir, path string, from int64) bool {
	if _, err := os.Stat(stateDir); err == nil {
		return true
	}
	for _, m := range guard.ClientFiles() { // through regular: a planted named pipe would hold the stop; it is a sign
		data, err := regular.ReadFile(filepath.Join(root, filepath.FromSlash(m)), 16<<20)
		if errors.Is(err, regular.ErrNotRegular) || err == nil && bytes.Contains(data, []byte("/gate")) {
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

// EmptyConfig reports whether the config file holds nothing but blanks: the same as missing, for the rule.
func EmptyConfig(file string) bool {
	data, err := regular.ReadFile(file, 4<<10) // a named pipe is not empty: reading it would hold the stop
	return err == nil && len(bytes.TrimSpace(data)) == 0
}
