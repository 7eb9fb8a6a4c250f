package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/detect"
	"github.com/stopgate/stopgate/internal/queue"
	"github.com/stopgate/stopgate/internal/reconcile"
	"github.com/stopgate/stopgate/internal/transcript"
)

const layoutsConfig = `[[mapping]]
prompt = "joke"
validators = ["v"]

[[mapping]]
prompt = "git/commit"
validators = ["v"]

[[mapping]]
prompt = "git-commit"
validators = ["v"]

[[mapping]]
prompt = "release-notes"
validators = ["v"]

[[mapping]]
prompt = "myplugin:review"
validators = ["v"]

[validators.v]
file = "x"
`

// layoutCases: every way the client names a prompt, and near misses. A
// read is a path relative to the root (or, starting with "/", absolute
// after $ROOT is replaced); a command starts with "/". want lists the
// keys armed, in mappings.toml order.
var layoutCases = []struct {
	name string
	want []string
}{
	{"src/prompts/joke.md", []string{"joke"}},
	{".claude/commands/joke.md", []string{"joke"}},
	{"-/joke.md", []string{"joke"}},
	{".claude/skills/joke/SKILL.md", []string{"joke"}},
	{"src/prompts/git/commit.md", []string{"git/commit"}},
	{".claude/commands/git/commit.md", []string{"git/commit"}},
	{".claude/commands/git-commit.md", []string{"git/commit", "git-commit"}}, // the dashed form collides
	{"-/git-commit.md", []string{"git/commit", "git-commit"}},
	{"src/prompts/git-commit.md", []string{"git-commit"}},
	{".claude/skills/release-notes/SKILL.md", []string{"release-notes"}},
	{"docs/joke.md", []string{"joke"}},                   // a symlink to src/prompts/joke.md
	{"$ROOT/src/prompts/x/../joke.md", []string{"joke"}}, // ".." that stays inside reads the prompt
	{"/joke", []string{"joke"}},
	{"/git:commit", []string{"git/commit"}},
	{"/git-commit", []string{"git/commit", "git-commit"}},
	{"/release-notes", []string{"release-notes"}},
	{"/myplugin:review", []string{"myplugin:review"}},
	{"/review", []string{"myplugin:review"}}, // the Skill tool's bare name of a plugin's skill

	// Near misses.
	{"src/prompts/JOKE.md", nil},
	{".claude/commands/Git/commit.md", nil},
	{".claude/commands/git:commit.md", nil},
	{".claude/skills/git/commit/SKILL.md", nil},
	{".claude/skills/joke/skill.md", nil},
	{".claude/skills/joke.md", nil},
	{"$ROOT/src/prompts/joke.md/", nil},
	{"$ROOT/../elsewhere/src/prompts/joke.md", nil},
	{"/etc/src/prompts/joke.md", nil},
	{"docs/out.md", nil}, // a symlink leading out of the project
	{"/Joke", nil},
	{"/git:Commit", nil},
	{"/git:commit:", nil},
	{"/myplugin-review", nil},
}

// TestLayoutsAgree feeds every access pattern through every caller that
// decides whether it arms a prompt: detect (the compiled index), the
// transcript reconciliation, gate explain, gate run and the config
// itself; they must agree with each other and with the table. gate
// check's "has no file" agrees too: in a project holding only the file
// read, it warns of exactly the keys the read does not arm.
func TestLayoutsAgree(t *testing.T) {
	root := t.TempDir()
	writeLayoutFile(t, root, "mappings.toml", layoutsConfig)
	for _, tc := range layoutCases {
		if rel, ok := relCase(tc.name); ok && !strings.HasPrefix(rel, "docs/") {
			writeLayoutFile(t, root, rel, "a prompt\n")
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../src/prompts/joke.md", filepath.Join(root, "docs/joke.md")); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "out.md")
	writeLayoutFile(t, filepath.Dir(outside), "out.md", "elsewhere\n")
	if err := os.Symlink(outside, filepath.Join(root, "docs/out.md")); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse([]byte(layoutsConfig), filepath.Join(root, "mappings.toml"), root)
	if err != nil {
		t.Fatal(err)
	}
	compiled, err := config.Load(filepath.Join(root, "mappings.toml"), root)
	if err != nil {
		t.Fatal(err)
	}

	for i, tc := range layoutCases {
		command := isCommandCase(tc.name)
		arg := strings.ReplaceAll(tc.name, "$ROOT", root)
		abs := arg
		if !command && !filepath.IsAbs(abs) {
			abs = filepath.Join(root, arg)
		}
		answers := map[string][]string{}

		// detect, from the compiled index, fed the client's event.
		answers["detect"] = detectArms(t, root, fmt.Sprintf("s%d", i), command, strings.TrimPrefix(arg, "/"), abs)

		// The compiled index and the parsed config, asked directly.
		var maps, parsed []*config.Mapping
		var err1, err2 error
		if command {
			maps, err1 = compiled.MatchCommand(arg[1:])
			parsed, err2 = cfg.MatchCommand(arg[1:])
		} else {
			maps, err1 = compiled.MatchRead(abs)
			parsed, err2 = cfg.MatchRead(abs)
		}
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: %v %v", tc.name, err1, err2)
		}
		answers["index"], answers["config"] = keysOf(maps), keysOf(parsed)

		// The transcript reconciliation.
		ev := transcript.Event{Kind: transcript.Read, Path: abs}
		if command {
			ev = transcript.Event{Kind: transcript.Command, Command: arg[1:]}
		}
		maps, err = reconcile.Armed(compiled, ev, queue.Scope{Session: "s"})
		if err != nil {
			t.Fatalf("%s: reconcile: %v", tc.name, err)
		}
		answers["reconcile"] = keysOf(maps)

		// gate explain, by what it prints.
		env, out := layoutEnv(root)
		ws := workspace{root: root, file: filepath.Join(root, "mappings.toml")}
		if command {
			err = explainCommand(env, ws, cfg, arg[1:])
		} else {
			err = explainPath(env, ws, cfg, abs)
		}
		exit, _ := errors.AsType[*cli.ExitError](err)
		if err != nil && (exit == nil || exit.Code != 1) {
			t.Fatalf("%s: explain: %v", tc.name, err)
		}
		ok := err == nil // exit 1: nothing armed
		answers["explain"] = explainedKeys(out.String())
		if ok != (len(answers["explain"]) > 0) {
			t.Errorf("%s: explain says armed=%v but lists %v", tc.name, ok, answers["explain"])
		}

		// gate run.
		found, err := resolvePrompt(env, cfg, arg)
		if err != nil && len(tc.want) > 0 {
			t.Errorf("%s: gate run: %v", tc.name, err)
		}
		answers["run"] = keysOf(found)

		for who, got := range answers {
			if !slices.Equal(got, tc.want) {
				t.Errorf("%s: %s arms %v, want %v", tc.name, who, got, tc.want)
			}
		}
		if rel, ok := relCase(tc.name); ok && !command {
			checkAgrees(t, rel, tc.want)
		}
	}
}

// checkAgrees: in a project holding only the file rel (and what a symlink
// there leads to), gate check warns "has no file" of exactly the keys that
// a read of rel does not arm; a plugin's command is never warned of.
func checkAgrees(t *testing.T, rel string, armed []string) {
	t.Helper()
	root := t.TempDir()
	writeLayoutFile(t, root, "mappings.toml", layoutsConfig)
	if strings.HasPrefix(rel, "docs/") {
		return // a symlink: detect follows it to a file checked on its own
	}
	writeLayoutFile(t, root, rel, "a prompt\n")
	_, ps, err := config.Inspect(filepath.Join(root, "mappings.toml"), root, config.Project)
	if err != nil {
		t.Fatal(err)
	}
	var warned []string
	for _, p := range ps {
		if m := regexp.MustCompile(`^prompt "([^"]+)" has no file`).FindStringSubmatch(p.Msg); m != nil {
			warned = append(warned, m[1])
		}
	}
	var want []string
	for _, k := range []string{"joke", "git/commit", "git-commit", "release-notes"} {
		if !slices.Contains(armed, k) {
			want = append(want, k)
		}
	}
	if !slices.Equal(warned, want) {
		t.Errorf("%s: gate check warns of %v having no file, want %v", rel, warned, want)
	}
}

// detectArms runs detect in-process on the client's event for the case
// and returns the keys it queued.
func detectArms(t *testing.T, root, session string, command bool, name, abs string) []string {
	t.Helper()
	in := map[string]any{"session_id": session, "cwd": root, "hook_event_name": "PostToolUse",
		"tool_name": "Read", "tool_input": map[string]any{"file_path": abs}}
	if command {
		in = map[string]any{"session_id": session, "cwd": root, "hook_event_name": "UserPromptExpansion",
			"expansion_type": "slash_command", "command_name": name, "prompt": "/" + name}
	}
	data, _ := json.Marshal(in)
	env, _ := layoutEnv(root)
	env.Stdin = bytes.NewReader(data)
	if err := detect.Run(env); err != nil {
		t.Fatalf("detect: %v", err)
	}
	entries, _, err := queue.Open(filepath.Join(root, config.DefaultStateDir)).Snapshot(queue.Scope{Session: session})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, e := range entries {
		keys = append(keys, e.Prompt)
	}
	// Snapshot orders by key; the table lists mappings.toml order.
	order := []string{"joke", "git/commit", "git-commit", "release-notes", "myplugin:review"}
	slices.SortFunc(keys, func(a, b string) int { return slices.Index(order, a) - slices.Index(order, b) })
	return keys
}

func layoutEnv(root string) (*cli.Env, *bytes.Buffer) {
	var out bytes.Buffer
	getenv := func(k string) string {
		if k == "CLAUDE_PROJECT_DIR" {
			return root
		}
		return ""
	}
	return &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out, Getenv: getenv, Dir: root}, &out
}

var explainedPrompt = regexp.MustCompile(`(?m)^  prompt "([^"]+)" \(`)

func explainedKeys(out string) []string {
	var keys []string
	for _, m := range explainedPrompt.FindAllStringSubmatch(out, -1) {
		keys = append(keys, m[1])
	}
	return keys
}

func keysOf(maps []*config.Mapping) []string {
	var keys []string
	for _, m := range maps {
		keys = append(keys, m.Prompt)
	}
	return keys
}

func isCommandCase(name string) bool {
	return strings.HasPrefix(name, "/") && !strings.Contains(name[1:], "/")
}

// relCase returns a read case's path relative to the root, when it has one.
func relCase(name string) (string, bool) {
	if strings.HasPrefix(name, "/") || strings.HasPrefix(name, "$ROOT") {
		return "", false
	}
	return name, true
}

func writeLayoutFile(t *testing.T, root, rel, content string) {
	t.Helper()
	path := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
