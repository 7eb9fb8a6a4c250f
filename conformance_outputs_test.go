package stopgate_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/detect"
	"github.com/stopgate/stopgate/internal/example"
	"github.com/stopgate/stopgate/internal/gate"
	"github.com/stopgate/stopgate/internal/schema"
	"github.com/stopgate/stopgate/internal/stop"
	"github.com/stopgate/stopgate/internal/testhook"
)

// hookPrograms are the stopgate commands that answer hooks, run in-process.
var hookPrograms = map[string]func(*cli.Env) error{
	"detect":   detect.Run,
	"gate":     gate.Run,
	"testhook": testhook.Run,
}

// hookEvents are the events each program handles, as it declares them: every one must
// be reached by some case of TestHookOutputsConform.
var hookEvents = map[string][]string{
	"detect":   detect.Events,
	"gate":     stop.Events,
	"testhook": testhook.Events,
}

// An answer is the kind of answer a hook gave, read from its stdout and exit code.
type answer string

const (
	ansSilent  answer = "silent"  // exit 0, nothing on stdout: no opinion
	ansContext answer = "context" // exit 0, hookSpecificOutput.additionalContext
	ansBlock   answer = "block"   // exit 0, {"decision":"block","reason":…}
	ansHalt    answer = "halt"    // exit 0, {"continue":false,"stopReason":…}
	ansDeny    answer = "deny"    // exit 0, permissionDecision "deny"
	ansSystem  answer = "system"  // exit 0, a systemMessage only
	ansFailed  answer = "failed"  // exit 1, one line on stderr, nothing on stdout
)

// A hookStep is one hook run: program reads in (a captured example with fields
// replaced) and must give want. A step with act set does that instead, as the agent
// or the user would between two hook runs.
type hookStep struct {
	program string
	in      hookInput
	want    answer
	// has, if set, must be in the answer's text (reason, stopReason, context or
	// stderr): it shows the intended path was taken, not a look-alike.
	has string
	act func(t *testing.T, root string)
	// vars are environment variables the step's hook sees beyond CLAUDE_PROJECT_DIR.
	vars map[string]string
}

// withEnv returns s run with the environment variable k set to v.
func (s hookStep) withEnv(k, v string) hookStep {
	vars := map[string]string{k: v}
	for k, v := range s.vars {
		vars[k] = v
	}
	s.vars = vars
	return s
}

func call(program string, in hookInput, want answer, has string) hookStep {
	return hookStep{program: program, in: in, want: want, has: has}
}

// act is a step that changes the project, as the agent or the user would.
func act(f func(*testing.T, string)) hookStep { return hookStep{act: f} }

// TestHookOutputsConform runs every output path of every hook program in-process, the
// way the client runs it (stdin, a minimal environment, the project as working
// directory), on inputs made from the inputs the real client sent (testdata/events/
// captured), and checks each stdout against the SDK's output schema of its event, the
// exit code (0, or 1 with stdout empty; never 2) and the kind of answer.
func TestHookOutputsConform(t *testing.T) {
	joke := readIn("src/prompts/joke.md")
	tests := []struct {
		name  string
		setup func(t *testing.T, root string)
		steps []hookStep
	}{
		// detect
		{"detect arms and announces", nil, []hookStep{
			call("detect", joke, ansContext, `the prompt "joke" will be checked`),
			call("detect", joke, ansSilent, ""), // armed again: said once already
		}},
		{"detect arms silently without announce", editConfig("announce     = true", "announce     = false"), []hookStep{
			call("detect", joke, ansSilent, ""),
			call("gate", stopIn(), ansBlock, "stopgate: you may not stop yet"), // it did arm
		}},
		{"detect arms from a subagent", nil, []hookStep{
			call("detect", joke.in(subagent), ansContext, `the prompt "joke" will be checked`),
			call("gate", stopIn(), ansSilent, ""),
			call("gate", subagentStopIn(), ansBlock, "stopgate: you may not stop yet"),
		}},
		{"detect arms a slash command", nil, []hookStep{
			call("detect", expansionIn("joke"), ansContext, `the prompt "joke" will be checked`),
			call("detect", promptIn("/joke about compilers"), ansSilent, ""),
		}},
		{"detect arms a typed slash command", nil, []hookStep{
			call("detect", promptIn("/joke about compilers"), ansContext, `the prompt "joke" will be checked`),
		}},
		{"detect ignores what is not mapped", writeProjectFile("notes.md", "# notes\n"), []hookStep{
			call("detect", readIn("notes.md"), ansSilent, ""),
			call("detect", readIn("mappings.toml"), ansSilent, ""),
			call("detect", readIn("/etc/hostname.md"), ansSilent, ""),
			call("detect", joke.with("tool_name", "Grep"), ansSilent, ""),
			call("detect", promptIn("tell me a joke"), ansSilent, ""),
			call("detect", promptIn("/unmapped"), ansSilent, ""),
			call("detect", expansionIn("unmapped"), ansSilent, ""),
			call("gate", stopIn(), ansSilent, ""),
		}},
		{"detect outside a stopgate project", removeProjectFile("mappings.toml"), []hookStep{
			call("detect", joke, ansSilent, ""),
		}},
		{"detect with a broken config", writeProjectFile("mappings.toml", "[[mapping]]\nprompt = \n"), []hookStep{
			call("detect", joke, ansFailed, "detect: "),
		}},
		{"detect on bad input", nil, []hookStep{
			call("detect", rawInput(""), ansFailed, "detect: no hook input"),
			call("detect", rawInput("hello"), ansFailed, "detect: hook input is not JSON"),
			call("detect", rawInput(`{"hook_event_name":"PostToolUse"}`), ansFailed, "detect: hook input has no session_id"),
			call("detect", stopIn(), ansFailed, `detect: unsupported hook event "Stop"`),
			call("detect", joke.with("tool_input", "x.md"), ansFailed, `detect: hook input field "tool_input"`),
		}},

		// detect's PreToolUse tamper guard: deny, or no opinion (never "allow")
		{"guard denies changes to the gate", nil, []hookStep{
			call("detect", writeIn("mappings.toml"), ansDeny, "stopgate denied this Write call: it would change mappings.toml"),
			call("detect", bashIn("rm -rf tmp/validation"), ansDeny, "stopgate denied this Bash call: it would change tmp/validation"),
			call("detect", bashIn("rm -rf tmp"), ansDeny, "stopgate's state dir"),
			call("detect", editIn("validators/validate-worktree.sh"), ansDeny, "stopgate denied this Edit call: it would change validators"),
			call("detect", writeIn("mappings.toml").in(subagent), ansDeny, "it would change mappings.toml"),
		}},
		{"guard lets the work through", nil, []hookStep{
			call("detect", writeIn("output/joke.txt"), ansSilent, ""),
			call("detect", bashIn("ls tmp/validation && cat mappings.toml"), ansSilent, ""),
			call("detect", bashIn("cat mappings.toml"), ansSilent, ""),
			call("detect", writeIn("mappings.toml").with("tool_name", "Read"), ansSilent, ""),
		}},
		{"guard outside a stopgate project", removeProjectFile("mappings.toml"), []hookStep{
			call("detect", writeIn("mappings.toml"), ansSilent, ""),
		}},
		{"guard with a broken config", writeProjectFile("mappings.toml", "[[mapping]]\nprompt = \n"), []hookStep{
			call("detect", writeIn("mappings.toml"), ansDeny, "it would change mappings.toml"),
			call("detect", bashIn("rm -rf tmp/validation"), ansDeny, "it would change tmp/validation"),
			call("detect", writeIn("output/joke.txt"), ansFailed, "detect: "),
		}},

		// gate
		{"gate with nothing pending", nil, []hookStep{
			call("gate", stopIn(), ansSilent, ""),
			call("gate", subagentStopIn(), ansSilent, ""),
		}},
		{"gate blocks, then passes the fixed work", nil, []hookStep{
			call("detect", joke, ansContext, ""),
			call("gate", stopIn(), ansBlock, `✘ prompt "joke", validator "joke-file"`),
			call("gate", stopIn().with("stop_hook_active", true), ansBlock, "Blocked stop 2 of 3"),
			act(writeProjectFile("output/joke.txt", "A joke, one line, finished.\n")),
			call("gate", stopIn().with("stop_hook_active", true), ansSilent, ""),
			call("gate", stopIn(), ansSilent, ""),
		}},
		{"gate halts after max_blocks", nil, []hookStep{
			call("detect", joke, ansContext, ""),
			call("gate", stopIn(), ansBlock, "Blocked stop 1 of 3"),
			call("gate", stopIn().with("stop_hook_active", true), ansBlock, "Blocked stop 2 of 3"),
			call("gate", stopIn().with("stop_hook_active", true), ansBlock, "Blocked stop 3 of 3"),
			call("gate", stopIn().with("stop_hook_active", true), ansHalt, "after 3 blocked stops"),
		}},
		{"gate halts at once with on_failure halt", editConfig("announce     = true", "announce     = true\non_failure   = \"halt\""), []hookStep{
			call("detect", joke, ansContext, ""),
			call("gate", stopIn(), ansHalt, `(on_failure = "halt")`),
		}},
		{"gate blocks a subagent only at its own stop", nil, []hookStep{
			call("detect", joke.in(subagent), ansContext, ""),
			call("gate", stopIn(), ansSilent, ""),
			call("gate", subagentStopIn(), ansBlock, `✘ prompt "joke"`),
		}},
		{"gate halts on a broken config", writeProjectFile("mappings.toml", "[settings]\nmax_blocks = \"three\"\n"), []hookStep{
			call("gate", stopIn(), ansHalt, "mappings.toml"),
			call("gate", subagentStopIn(), ansHalt, "mappings.toml"),
		}},
		{"gate halts when the config went missing with prompts pending", nil, []hookStep{
			call("detect", joke, ansContext, ""),
			act(removeProjectFile("mappings.toml")),
			call("gate", stopIn(), ansHalt, "mappings.toml is missing"),
		}},
		{"gate outside a stopgate project", removeProjectFile("mappings.toml"), []hookStep{
			call("gate", stopIn(), ansSilent, ""),
		}},
		{"gate on bad input", nil, []hookStep{
			call("gate", rawInput(""), ansFailed, "gate: no hook input"),
			call("gate", rawInput("[]"), ansFailed, "gate: hook input is a JSON array"),
			call("gate", joke, ansFailed, `gate: unsupported hook event "PostToolUse"`),
			call("gate", stopIn().with("stop_hook_active", "yes"), ansFailed, `gate: hook input field "stop_hook_active"`),
		}},

		// testhook, the test runner: its words at UserPromptSubmit, its answers at Stop
		{"testhook leaves other prompts alone", suite(greetingsSuite), []hookStep{
			call("testhook", promptIn("next"), ansSilent, ""), // no run: the person talking to the agent
			call("testhook", promptIn("tell me a joke"), ansSilent, ""),
			call("testhook", stopIn(), ansSilent, ""),
			call("testhook", subagentStopIn(), ansSilent, ""),
		}},
		{"testhook run by hand", suite(greetingsSuite), []hookStep{
			call("testhook", promptIn("/run-tests"), ansBlock, "Started a run of 2 tests"),
			call("testhook", promptIn("next"), ansContext, "stopgate test run, Test 1/2: hello"),
			call("testhook", promptIn("next, then refactor the parser"), ansSilent, ""),
			call("testhook", stopIn().with("last_assistant_message", "Hello, stopgate!"), ansSilent, ""), // kept
			call("testhook", subagentStopIn(), ansSilent, ""),
			call("testhook", promptIn("validate"), ansBlock, "PASS hello (1/2)"),
			call("testhook", promptIn("status"), ansBlock, "(current)"),
			call("testhook", promptIn("vars"), ansBlock, "No variables saved yet."),
			call("testhook", promptIn("v TODO"), ansBlock, "FAIL finished (2/2)"),
			call("testhook", promptIn("report"), ansBlock, "2 tests, 1 passed, 1 failed"),
			call("testhook", promptIn("retry parsing"), ansSilent, ""),
		}},
		{"testhook abort", suite(greetingsSuite), []hookStep{
			call("testhook", promptIn("/run-tests --tag none"), ansBlock, ""),
			call("testhook", promptIn("/run-tests --bogus"), ansBlock, "usage: /run-tests"),
			call("testhook", promptIn("/run-tests"), ansBlock, "Started a run"),
			call("testhook", promptIn("abort"), ansBlock, ""),
		}},
		{"testhook auto mode", suite(greetingsSuite), []hookStep{
			call("testhook", promptIn("/run-tests --auto"), ansContext, "stopgate test run, Test 1/2: hello"),
			call("testhook", stopIn().with("last_assistant_message", "Hello, stopgate!"), ansBlock, "PASS hello (1/2)."),
			call("testhook", stopIn().with("stop_hook_active", true).with("last_assistant_message", "Done."), ansSystem, "Run complete"),
			call("testhook", stopIn().with("last_assistant_message", "Done."), ansSilent, ""),
		}},
		{"testhook auto mode pauses before the client's block cap", suite(threeSuite), []hookStep{
			call("testhook", promptIn("/run-tests --auto"), ansContext, "Test 1/3").withEnv("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", "2"),
			call("testhook", stopIn().with("last_assistant_message", "one"), ansBlock, "PASS t1 (1/3).").withEnv("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", "2"),
			call("testhook", stopIn().with("stop_hook_active", true).with("last_assistant_message", "two"), ansSystem, "The run pauses here").withEnv("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", "2"),
			call("testhook", promptIn("next"), ansContext, "Test 3/3"),
		}},
		{"testhook lets the gate judge first", suite(greetingsSuite), []hookStep{
			call("testhook", promptIn("/run-tests --auto"), ansContext, ""),
			call("detect", joke, ansContext, ""),
			call("testhook", stopIn().with("last_assistant_message", "Hello, stopgate!"), ansSilent, ""),
			call("gate", stopIn(), ansBlock, "stopgate: you may not stop yet"),
		}},
		{"testhook with a broken tests file", suite(`{"tests": [{"id": "x"}]}`), []hookStep{
			call("testhook", promptIn("/run-tests"), ansBlock, "testhook: cannot start the run"),
		}},
		{"testhook with a broken config", writeProjectFile("mappings.toml", "[settings]\nstate_dir = 3\n"), []hookStep{
			call("testhook", promptIn("/run-tests"), ansBlock, "testhook: "),
			call("testhook", promptIn("hello"), ansSilent, ""),
			call("testhook", stopIn(), ansFailed, "testhook: "),
		}},
		{"testhook on bad input", nil, []hookStep{
			call("testhook", rawInput(""), ansFailed, "testhook: no hook input"),
			call("testhook", joke, ansFailed, `testhook: unsupported hook event "PostToolUse"`),
		}},
	}

	reached := map[string]map[string]bool{} // program → event → reached
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := exampleProject(t)
			if tt.setup != nil {
				tt.setup(t, root)
			}
			for i, s := range tt.steps {
				if s.act != nil {
					s.act(t, root)
					continue
				}
				in := s.in.render(t, root)
				event := s.in.event()
				code, stdout, stderr := runHook(t, s.program, root, in, s.vars)
				if reached[s.program] == nil {
					reached[s.program] = map[string]bool{}
				}
				if s.want != ansFailed {
					reached[s.program][event] = true
				}
				where := func() string {
					return strings.Join([]string{"step", strconv.Itoa(i + 1), s.program, event, "→ exit", strconv.Itoa(code),
						"\nstdout: " + stdout, "\nstderr: " + stderr}, " ")
				}
				if code == 2 {
					t.Fatalf("exit 2 is a blocking error to the client, never a hook's answer: %s", where())
				}
				if event != "" {
					if err := schema.ValidateOutput(event, []byte(stdout)); err != nil {
						t.Errorf("output does not conform: %v: %s", err, where())
					}
				}
				got, text := classify(code, stdout, stderr)
				if got != s.want {
					t.Errorf("answer %s, want %s: %s", got, s.want, where())
				}
				if s.has != "" && !strings.Contains(text, s.has) {
					t.Errorf("answer lacks %q: %s", s.has, where())
				}
			}
		})
	}
	for prog, events := range hookEvents {
		for _, ev := range events {
			if !reached[prog][ev] {
				t.Errorf("no case runs %s on a %s input: add one, so its outputs are checked", prog, ev)
			}
		}
	}
}

// runHook runs program in-process on stdin with the environment the client gives a
// hook, reduced to what stopgate reads.
func runHook(t *testing.T, program, root, stdin string, extra map[string]string) (code int, stdout, stderr string) {
	t.Helper()
	run, ok := hookPrograms[program]
	if !ok {
		t.Fatalf("no hook program %q", program)
	}
	vars := map[string]string{"CLAUDE_PROJECT_DIR": root}
	for k, v := range extra {
		vars[k] = v
	}
	var out, errb bytes.Buffer
	code = cli.Run(program, &cli.Env{
		Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string { return vars[k] },
		Dir:    root,
	}, run)
	return code, out.String(), errb.String()
}

// classify reads the kind of answer from a hook's exit code and output, and returns
// the text it carries.
func classify(code int, stdout, stderr string) (answer, string) {
	if code != 0 {
		if code == 1 && stdout == "" && oneLineError(stderr) {
			return ansFailed, stderr
		}
		return answer("exit " + strconv.Itoa(code)), stderr
	}
	if strings.TrimSpace(stdout) == "" {
		return ansSilent, ""
	}
	var o struct {
		Continue      *bool  `json:"continue"`
		StopReason    string `json:"stopReason"`
		Decision      string `json:"decision"`
		Reason        string `json:"reason"`
		SystemMessage string `json:"systemMessage"`
		Specific      *struct {
			AdditionalContext        string `json:"additionalContext"`
			PermissionDecision       string `json:"permissionDecision"`
			PermissionDecisionReason string `json:"permissionDecisionReason"`
		} `json:"hookSpecificOutput"`
	}
	if json.Unmarshal([]byte(stdout), &o) != nil {
		return "not JSON", stdout
	}
	switch {
	case o.Continue != nil && !*o.Continue:
		return ansHalt, o.StopReason
	case o.Decision == "block":
		return ansBlock, o.Reason
	case o.Specific != nil && o.Specific.PermissionDecision == "deny":
		return ansDeny, o.Specific.PermissionDecisionReason
	case o.Specific != nil && o.Specific.AdditionalContext != "":
		return ansContext, o.Specific.AdditionalContext
	case o.SystemMessage != "":
		return ansSystem, o.SystemMessage
	}
	return "other", stdout
}

// oneLineError reports whether stderr is one error line, then only hint lines
// (tab-indented): what the client shows in its log as one error.
func oneLineError(stderr string) bool {
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	for _, l := range lines[1:] {
		if !strings.HasPrefix(l, "\t") {
			return false
		}
	}
	return lines[0] != "" && !strings.HasPrefix(lines[0], "\t")
}

// A hookInput makes one hook input object from a captured example of the real client's
// (testdata/events/captured/KIND.json), with fields set or removed.
type hookInput struct {
	kind  string         // the captured example; "" for raw input
	set   map[string]any // top-level fields to set; nil values remove
	rawIn string         // the whole input, when kind is ""
}

func readIn(path string) hookInput {
	return hookInput{kind: "PostToolUse.Read", set: map[string]any{
		"tool_input": map[string]any{"file_path": absPath(path)},
	}}
}

// writeIn is a PreToolUse of Write to path; bashIn of Bash running command.
func writeIn(path string) hookInput {
	return hookInput{kind: "PreToolUse.Write", set: map[string]any{
		"tool_input": map[string]any{"file_path": absPath(path), "content": "x\n"},
	}}
}

func bashIn(command string) hookInput {
	return hookInput{kind: "PreToolUse.Bash", set: map[string]any{
		"tool_input": map[string]any{"command": command, "description": "x"},
	}}
}

func promptIn(text string) hookInput {
	return hookInput{kind: "UserPromptSubmit", set: map[string]any{"prompt": text}}
}

func expansionIn(command string) hookInput {
	return hookInput{kind: "UserPromptExpansion", set: map[string]any{
		"command_name": command, "command_args": "", "prompt": "/" + command,
	}}
}

// editIn is a PreToolUse of Edit on path.
func editIn(path string) hookInput {
	return hookInput{kind: "PreToolUse.Write", set: map[string]any{
		"tool_name":  "Edit",
		"tool_input": map[string]any{"file_path": absPath(path), "old_string": "exit 1", "new_string": "exit 0"},
	}}
}

func stopIn() hookInput         { return hookInput{kind: "Stop"} }
func subagentStopIn() hookInput { return hookInput{kind: "SubagentStop"} }

// raw is an input given as is; its output is checked against no event's schema
// (stdout must be empty anyway).
func rawInput(s string) hookInput { return hookInput{rawIn: s} }

// subagent holds the fields that mark an input from inside the subagent of the
// captured SubagentStop example.
var subagent = map[string]any{"agent_id": "{{AGENT_ID}}", "agent_type": "general-purpose"}

func (h hookInput) with(key string, v any) hookInput {
	set := map[string]any{}
	for k, v := range h.set {
		set[k] = v
	}
	set[key] = v
	h.set = set
	return h
}

func (h hookInput) in(fields map[string]any) hookInput {
	for k, v := range fields {
		h = h.with(k, v)
	}
	return h
}

func (h hookInput) event() string {
	if h.kind == "" {
		return ""
	}
	ev, _, _ := strings.Cut(h.kind, ".")
	return ev
}

// absPath marks a project-relative path for render; an absolute one stays.
func absPath(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return "{{ROOT}}/" + p
}

// render returns the input as the client would send it for the project at root. Every
// session is the captured one, so that the steps of a case share it.
func (h hookInput) render(t *testing.T, root string) string {
	t.Helper()
	if h.kind == "" {
		return h.rawIn
	}
	data, err := os.ReadFile(filepath.Join("testdata/events/captured", h.kind+".json"))
	if err != nil {
		t.Fatalf("no captured example of a %s input: %v (run the e2e suite with -update)", h.kind, err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	for k, v := range h.set {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	// One session for every kind of input, so detect and gate meet in the queue.
	m["session_id"] = "c0ffee00-0000-4000-8000-000000000001"
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	agent := agentID(t)
	home := filepath.Join(root, ".home")
	return strings.NewReplacer("{{ROOT}}", root, "{{HOME}}", home,
		"{{PROJECT_KEY}}", strings.ReplaceAll(root, "/", "-"), "{{AGENT_ID}}", agent).Replace(string(out))
}

// agentID is the agent of the captured SubagentStop example.
func agentID(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("testdata/events/captured/SubagentStop.json")
	if err != nil {
		t.Fatal(err)
	}
	var in struct {
		AgentID string `json:"agent_id"`
	}
	if err := json.Unmarshal(data, &in); err != nil || in.AgentID == "" {
		t.Fatalf("captured SubagentStop has no agent_id: %v", err)
	}
	return in.AgentID
}

// exampleProject copies the repository's example project into a temporary directory.
func exampleProject(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if err := example.Copy(".", root); err != nil {
		t.Fatal(err)
	}
	return root
}

// Test suites in the seed format, for testhook.
const (
	greetingsSuite = `{"version": "1.0", "description": "greetings", "tests": [
  {"id": "hello", "description": "Say hello", "action": "Say hello to stopgate.", "expect": [{"contains": "Hello"}]},
  {"id": "finished", "action": "Write one finished sentence.", "expect": [{"not_contains": "TODO"}]}]}`
	threeSuite = `{"tests": [
  {"id": "t1", "action": "Say one.", "expect": [{"contains": "one"}]},
  {"id": "t2", "action": "Say two.", "expect": [{"contains": "two"}]},
  {"id": "t3", "action": "Say three.", "expect": [{"contains": "three"}]}]}`
)

// suite writes tests/functional/tests.json, where testhook looks by default.
func suite(json string) func(*testing.T, string) {
	return writeProjectFile("tests/functional/tests.json", json)
}

func editConfig(old, new string) func(*testing.T, string) {
	return func(t *testing.T, root string) {
		t.Helper()
		path := filepath.Join(root, "mappings.toml")
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(data, []byte(old)) {
			t.Fatalf("mappings.toml has no %q", old)
		}
		mustWrite(t, path, strings.Replace(string(data), old, new, 1))
	}
}

func writeProjectFile(rel, content string) func(*testing.T, string) {
	return func(t *testing.T, root string) { mustWrite(t, filepath.Join(root, rel), content) }
}

func removeProjectFile(rel string) func(*testing.T, string) {
	return func(t *testing.T, root string) {
		if err := os.Remove(filepath.Join(root, rel)); err != nil {
			t.Fatal(err)
		}
	}
}

func mustWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
