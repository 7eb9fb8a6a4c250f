package e2e

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stopgate/stopgate/internal/settings"
)

// A Project is a throwaway Claude Code project for one scenario: a fresh directory the
// client runs in, with its own HOME so no user configuration, session or transcript
// leaks in or out.
type Project struct {
	t testing.TB
	// Dir is the project root, the client's working directory and CLAUDE_PROJECT_DIR.
	Dir string
	// Home is the client's HOME; transcripts go under Home/.claude/projects.
	Home string
	// Env holds extra KEY=VALUE settings for the client, e.g.
	// CLAUDE_CODE_STOP_HOOK_BLOCK_CAP=20.
	Env []string
	// Timeout bounds one Run; zero means 90 seconds (a run takes about one; the bound is
	// for a hang, and a 2-core machine busy with other work can take 30).
	Timeout time.Duration
	// AllowedTools is claude's --allowedTools; "" means "Read Write Bash".
	AllowedTools string
	// InitOutput is what `gate init` printed, for a stopgate project.
	InitOutput string

	hooks map[string][]hookGroup
	// captureDir receives the hook inputs the wrapper saves (see capture); wrapped
	// names the commands that run through it.
	captureDir string
	wrapped    map[string]bool
}

// hookGroup is one entry of an event's list in .claude/settings.json.
type hookGroup struct {
	Matcher string        `json:"matcher,omitempty"`
	Hooks   []hookCommand `json:"hooks"`
}

type hookCommand struct {
	Type    string `json:"type"`
	Command string `json:"command"`
}

// NewProject returns an empty Project in a temporary directory that t removes. It skips
// t when the client is not installed, before any work is done.
func NewProject(t testing.TB) *Project {
	t.Helper()
	Claude(t)
	return &Project{
		t:     t,
		Dir:   t.TempDir(),
		Home:  t.TempDir(),
		hooks: map[string][]hookGroup{},
	}
}

// Path returns the absolute path of rel, a slash-separated path in the project.
func (p *Project) Path(rel string) string {
	return filepath.Join(p.Dir, filepath.FromSlash(rel))
}

// WriteFile writes content to rel in the project, creating directories. A file whose
// content starts with "#!" is made executable.
func (p *Project) WriteFile(rel, content string) {
	p.t.Helper()
	path := p.Path(rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		p.t.Fatalf("e2e: %v", err)
	}
	mode := fs.FileMode(0o644)
	if strings.HasPrefix(content, "#!") {
		mode = 0o755
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		p.t.Fatalf("e2e: %v", err)
	}
}

// ReadFile returns the content of rel in the project, or "" if it does not exist.
func (p *Project) ReadFile(rel string) string {
	p.t.Helper()
	data, err := os.ReadFile(p.Path(rel))
	if err != nil && !os.IsNotExist(err) {
		p.t.Fatalf("e2e: %v", err)
	}
	return string(data)
}

// Hook registers command for event in the project's .claude/settings.json, as a user
// would: matcher is a tool-name pattern for tool events and "" for the others. Refer to
// project files as "$CLAUDE_PROJECT_DIR"/path. A file already there (a stopgate
// project's, from gate init) keeps its hooks: Run merges these in.
func (p *Project) Hook(event, matcher, command string) {
	p.hooks[event] = append(p.hooks[event], hookGroup{
		Matcher: matcher,
		Hooks:   []hookCommand{{Type: "command", Command: command}},
	})
}

// writeSettings writes the registered hooks into .claude/settings.json: the file as is
// when none are, else merged into what it holds (a stopgate project's come from gate
// init), each program once per event and matcher.
func (p *Project) writeSettings() {
	p.t.Helper()
	rel := ".claude/settings.json"
	existing := p.ReadFile(rel)
	if len(p.hooks) == 0 && existing != "" {
		return
	}
	settings := map[string]any{}
	if existing != "" {
		if err := json.Unmarshal([]byte(existing), &settings); err != nil {
			p.t.Fatalf("e2e: %s: %v", rel, err)
		}
	}
	hooks, _ := settings["hooks"].(map[string]any)
	if hooks == nil {
		hooks = map[string]any{}
	}
	changed := existing == ""
	for event, groups := range p.hooks {
		list, _ := hooks[event].([]any)
		for _, g := range groups {
			if !registered(list, g) {
				list = append(list, g)
				changed = true
			}
		}
		hooks[event] = list
	}
	if !changed {
		return
	}
	settings["hooks"] = hooks
	data, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		p.t.Fatalf("e2e: %v", err)
	}
	p.WriteFile(rel, string(data)+"\n")
}

// registered reports whether every command of g is in list, an event's groups as
// decoded from a settings file, under the same matcher: the same command, or one
// running the same program.
func registered(list []any, g hookGroup) bool {
	for _, c := range g.Hooks {
		found := false
		for _, item := range list {
			group, _ := item.(map[string]any)
			matcher, _ := group["matcher"].(string)
			cmds, _ := group["hooks"].([]any)
			for _, cmd := range cmds {
				command, _ := cmd.(map[string]any)["command"].(string)
				// gate init registers a launcher of the program: the same hook.
				found = found || matcher == g.Matcher && (command == c.Command || settings.Program(command) == settings.Program(c.Command))
			}
		}
		if !found {
			return false
		}
	}
	return true
}
