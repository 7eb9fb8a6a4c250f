package stopgate_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/stopgate/stopgate/internal/detect"
	"github.com/stopgate/stopgate/internal/schema"
	"github.com/stopgate/stopgate/internal/stop"
	"github.com/stopgate/stopgate/internal/testhook"
)

// schema EVENT [FILE] checks that FILE (by default the last command's
// stdout), what a hook printed, is an output Claude Code accepts for EVENT
// by the Agent SDK's schema (internal/schema). Empty output, a hook's
// silence, is valid for every event. "! schema" passes only on an output
// the schema rejects, never on an event it does not know.
func cmdSchema(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: schema EVENT [FILE]")
	}
	file := "stdout"
	if len(args) == 2 {
		file = args[1]
	}
	err := schema.ValidateOutput(args[0], []byte(ts.ReadFile(file)))
	var invalid *schema.Error
	switch {
	case err != nil && !errors.As(err, &invalid):
		ts.Fatalf("%v", err)
	case neg && err == nil:
		ts.Fatalf("%s is a valid %s output", file, args[0])
	case !neg && err != nil:
		ts.Fatalf("%s: %v", file, err)
	}
}

// capturedSession is the session of every input captured writes, so that
// the hooks of one script meet in one queue.
const capturedSession = "c0ffee00-0000-4000-8000-000000000001"

// captured KIND FILE [KEY=JSON]... writes FILE, the hook input of KIND as
// the real client sent it (testdata/events/captured/KIND.json), for the
// project at $WORK and of capturedSession, with each top-level KEY set to
// the JSON value (null removes it). {{ROOT}} in a value is $WORK.
//
// The client's record of the session that the input names under $WORK
// (transcript_path, agent_transcript_path) is created when it is not
// there, and a stop's reply (last_assistant_message) is appended to the
// one its thread is read from: the real client has written both by the
// time a hook is done, and a stop whose record never shows them judges
// every mapping.
func cmdCaptured(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: captured KIND FILE [KEY=JSON]...")
	}
	data, err := os.ReadFile(filepath.Join(capturedEvents, args[0]+".json"))
	ts.Check(err)
	var in map[string]json.RawMessage
	ts.Check(json.Unmarshal(data, &in))
	in["session_id"] = json.RawMessage(`"` + capturedSession + `"`)
	for _, kv := range args[2:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !json.Valid([]byte(v)) {
			ts.Fatalf("captured: %q is not KEY=JSON", kv)
		}
		if v == "null" {
			delete(in, k)
		} else {
			in[k] = json.RawMessage(v)
		}
	}
	out, err := json.Marshal(in)
	ts.Check(err)
	work := ts.Getenv("WORK")
	fill := strings.NewReplacer("{{ROOT}}", work, "{{HOME}}", filepath.Join(work, ".home"),
		"{{PROJECT_KEY}}", strings.ReplaceAll(work, "/", "-"))
	filled := fill.Replace(string(out))
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(filled), 0o644))
	var paths struct {
		Transcript string `json:"transcript_path"`
		Agent      string `json:"agent_transcript_path"`
		Reply      string `json:"last_assistant_message"`
	}
	ts.Check(json.Unmarshal([]byte(filled), &paths))
	for _, p := range []string{paths.Transcript, paths.Agent} {
		if p == "" || !strings.HasPrefix(p, work+string(filepath.Separator)) {
			continue
		}
		ts.Check(os.MkdirAll(filepath.Dir(p), 0o755))
		f, err := os.OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		ts.Check(err)
		// A stop's record holds the reply it follows, as the client's did.
		if agent := paths.Agent != ""; paths.Reply != "" && (p == paths.Agent) == agent {
			_, err = f.Write(replyLine(ts, paths.Reply, agent, ""))
			ts.Check(err)
		}
		ts.Check(f.Close())
	}
}

// hookEvents are the events each hook program handles, as it declares them.
var hookEvents = map[string][]string{
	"detect":   detect.Events,
	"gate":     stop.Events,
	"testhook": testhook.Events,
}

// TestScriptsCheckEveryHookEvent keeps the scripts' reach: every event a
// hook program declares has a "schema EVENT" check right after a run of
// that program that succeeded on an input of that event, on a line that
// always runs. TestScripts proves each check passes; this proves none is
// missing, and that none checks the wrong output or the wrong event.
func TestScriptsCheckEveryHookEvent(t *testing.T) {
	files, err := filepath.Glob("testdata/script/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	checked := map[string]bool{} // "program event"
	for _, f := range files {
		a, err := txtar.ParseFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range schemaChecks(t, f, a) {
			checked[c] = true
		}
	}
	for _, prog := range slices.Sorted(maps.Keys(hookEvents)) {
		for _, ev := range hookEvents[prog] {
			if !checked[prog+" "+ev] {
				t.Errorf("no script checks %s's output for a %s input: add \"schema %s\" after one such run", prog, ev, ev)
			}
		}
	}
}

// A hookRun is a script's run of a hook program, as far as a schema check
// after it needs to know.
type hookRun struct {
	program string
	event   string // of its input; "" when the script cannot tell
	ok      bool   // "exec PROG" or "exits 0 PROG": it succeeded
	dialect bool   // --client: it spoke another client's dialect
}

// schemaChecks returns "program event" for each unconditional "schema
// EVENT" of script f that checks the output of a successful run of program
// on an input of event. It fails the test on a "schema EVENT" that checks
// any other output: one of no hook run, of a run in another client's
// dialect, or of an input of another event. ("! schema" may check anything.)
func schemaChecks(t *testing.T, f string, a *txtar.Archive) []string {
	t.Helper()
	inputs := map[string]string{} // file → event of the input in it
	for _, af := range a.Files {
		var in struct {
			Event string `json:"hook_event_name"`
		}
		if json.Unmarshal(af.Data, &in) == nil {
			inputs[af.Name] = in.Event
		}
	}
	var found []string
	var last *hookRun // the command before, when it was a hook run
	stdin := ""
	for i, line := range strings.Split(string(a.Comment), "\n") {
		where := fmt.Sprintf("%s:%d", f, i+1)
		words, cond, neg := scriptWords(line)
		if len(words) == 0 {
			continue
		}
		switch {
		case words[0] == "stdin" && len(words) == 2:
			stdin = words[1]
		case words[0] == "captured" && len(words) >= 3:
			inputs[words[2]], _, _ = strings.Cut(words[1], ".")
		case words[0] == "exec" || words[0] == "exits":
			last = runOf(words, neg, inputs[stdin])
			stdin = ""
		case words[0] == "schema" && len(words) == 2 && !neg:
			switch {
			case last == nil:
				t.Errorf("%s: schema checks the stdout of a command that is no hook run", where)
			case last.dialect:
				t.Errorf("%s: schema checks Claude Code's outputs, and %s ran with --client", where, last.program)
			case last.event != "" && last.event != words[1]:
				t.Errorf("%s: schema %s after a run of %s on a %s input", where, words[1], last.program, last.event)
			case last.event != "" && last.ok && !cond:
				found = append(found, last.program+" "+words[1])
			}
		case readsOutput[words[0]]:
			// The last output stays.
		default:
			last = nil
		}
	}
	return found
}

// readsOutput are the script commands that leave the last command's output
// as it was; schema checks it after them too.
var readsOutput = map[string]bool{"stdout": true, "stderr": true, "cmp": true, "exists": true, "grep": true, "schema": true}

// runOf is the hook run of an exec or exits line, or nil for any other
// program or a command of a hook program's CLI (its first argument is no
// flag), or a run in the background.
func runOf(words []string, neg bool, event string) *hookRun {
	ok := words[0] == "exec" && !neg
	if words[0] == "exits" && len(words) > 1 {
		ok, words = words[1] == "0", words[1:]
	}
	if len(words) < 2 {
		return nil
	}
	args := words[2:]
	if _, hook := hookEvents[words[1]]; !hook || len(args) > 0 && !strings.HasPrefix(args[0], "-") ||
		len(args) > 0 && strings.HasSuffix(args[len(args)-1], "&") {
		return nil
	}
	r := &hookRun{program: words[1], event: event, ok: ok}
	for _, a := range args {
		r.dialect = r.dialect || a == "--client" || strings.HasPrefix(a, "--client=")
	}
	return r
}

// scriptWords splits a script line as testscript does, well enough for the
// words schemaChecks reads (no quoting), and takes off its prefixes: cond
// reports a [condition], neg a "!".
func scriptWords(line string) (words []string, cond, neg bool) {
	line, _, _ = strings.Cut(line, "#")
	words = strings.Fields(line)
	for len(words) > 0 && strings.HasPrefix(words[0], "[") {
		cond, words = true, words[1:]
	}
	if len(words) > 0 && words[0] == "!" {
		neg, words = true, words[1:]
	}
	return words, cond, neg
}
