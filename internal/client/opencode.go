package client

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/settings"
)

// OpenCode has no command hooks: init's plugin sends Claude-shaped events with OpenCode's tools.
var OpenCode = &Client{
	Name: "opencode", Title: "OpenCode",
	HookFile: ".opencode/plugin/stopgate.js",
	Settings: []string{"opencode.json", "opencode.jsonc"}, // permission rules, the wall
	Timeout:  600 * time.Second,                           // the plugin sets none: as gate init registers the others
	WallLeft: "the wall is OpenCode's permission rules in opencode.json: with them up, the write, edit and patch tools are refused the protected set; OpenCode has no sandbox for the shell, so every bash command, and a rule the user answers \"allow\" or edits away, are the guard's alone (the plugin's tool.execute.before)",
	Trust:    "OpenCode loads a project's plugins without asking: the plugin gates sessions that stay alive (opencode serve, the TUI); opencode run exits at idle, before a block can send the agent back",
	Limits: []string{
		"OpenCode has no command hooks: the plugin in .opencode/plugin/stopgate.js runs detect and gate; session.idle cannot refuse a stop, so a block is sent back as the session's next prompt",
		"OpenCode has no stop_hook_active: the plugin counts its own continuations; max_blocks ends a failing loop",
		"opencode run exits when the session goes idle: use opencode serve or the TUI",
	},
	input: &shape{drop: []string{"tool_response"}, file: "filePath", fix: noFix,
		tools: map[string]string{"read": "Read", "write": "Write", "edit": "Edit", "patch": "Edit", "bash": "Bash"}},
	threads: mainOnly,
	lines:   lineOf(opencodeShow),
	plugin:  opencodePlugin,
	Wall:    opencodeWall{},
}

//go:embed opencode_plugin.js
var opencodePlugin string

// opencodeLine is a message of the session the plugin writes to transcript_path at each stop.
type opencodeLine struct {
	Role  string `json:"role"`
	Parts []struct {
		Type  string         `json:"type"`
		Tool  string         `json:"tool"`
		Input map[string]any `json:"input"`
		Text  string         `json:"text"`
	} `json:"parts"`
}

func opencodeShow(l *opencodeLine, e *entry, r reader) {
	var texts []string
	for _, p := range l.Parts {
		switch {
		case p.Type == "text":
			texts = append(texts, p.Text)
		case p.Type == "tool":
			r.call(e, p.Tool, p.Input)
		}
	}
	if l.Role == "user" && texts != nil {
		e.user(strings.Join(texts, "\n"))
	}
}

// OpenCode's wall is its edit rules "deny" in opencode.json (docs/clients.md).
const opencodeConfig = "opencode.json"

// opencodePatterns returns the edit patterns of the protected set, from the git top and from "/".
func opencodePatterns(root string, paths []Path) []string {
	tops := []string{"/"}
	for d := filepath.Clean(root); d != filepath.Dir(d); d = filepath.Dir(d) { // and the git top, which holds .git
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			tops = append(tops, d)
			break
		}
	}
	var out []string
	for _, p := range paths {
		st, err := os.Stat(filepath.FromSlash(p.Path))
		dir := (err == nil && st.IsDir()) || p.Dir
		for _, top := range tops {
			r, _ := filepath.Rel(top, filepath.FromSlash(p.Path)) // both absolute: no error
			r = filepath.ToSlash(r) + map[bool]string{true: "/*"}[dir]
			if !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	return out
}

// opencodeWall is OpenCode's permission rules (Wall).
type opencodeWall struct{}

func (opencodeWall) File() string { return opencodeConfig }

func (opencodeWall) Up(w io.Writer, root string, paths []Path) error {
	path := filepath.Join(root, opencodeConfig)
	data, err := settings.ReadIfThere(path)
	if err != nil {
		return err
	}
	want := opencodePatterns(root, paths)
	out, added, note, err := settings.MergeEditDeny(data, want)
	if err != nil {
		return mergeError(opencodeConfig, err)
	}
	if note != "" {
		fmt.Fprintf(w, "note: %s: %s; left as it is: the guard alone stands there\n", opencodeConfig, note)
	}
	switch {
	case len(added) == 0 && note == "":
		fmt.Fprintf(w, "%s: OpenCode's permission wall is already there (%s)\n", opencodeConfig, cli.Plural(len(want), "edit deny rule", "edit deny rules"))
	case len(added) > 0:
		if err := settings.WriteFile(path, out); err != nil {
			return fmt.Errorf("writing %s: %w", opencodeConfig, err)
		}
		fmt.Fprintf(w, "%s: OpenCode's permission wall: added %s\n", opencodeConfig, cli.Plural(len(added), "edit deny rule", "edit deny rules"))
		for _, a := range added {
			fmt.Fprintf(w, "  + permission.edit %s = \"deny\"\n", settings.Quote(a))
		}
	}
	return nil
}

func (opencodeWall) Remove(data []byte, root string, paths []Path) (out []byte, r settings.Removal, gone bool, err error) {
	out, removed, err := settings.RemoveEditDeny(data, opencodePatterns(root, paths))
	if err != nil {
		return nil, r, false, err
	}
	for _, p := range removed {
		r.Removed = append(r.Removed, "permission.edit "+settings.Quote(p))
	}
	return out, r, len(removed) > 0 && strings.Join(strings.Fields(string(out)), "") == "{}", nil // an empty object is no config
}

func (opencodeWall) Ready(root string) error {
	data, err := settings.ReadIfThere(filepath.Join(root, opencodeConfig))
	if err != nil {
		return err
	}
	if _, _, _, err := settings.MergeEditDeny(data, nil); err != nil {
		return mergeError(opencodeConfig, err)
	}
	return nil
}

func (opencodeWall) Check(_ func(string) string, root string, paths []Path) []Finding {
	data, err := settings.ReadIfThere(filepath.Join(root, opencodeConfig))
	if err != nil {
		return []Finding{{Loc: opencodeConfig, Msg: err.Error()}}
	}
	open, err := settings.EditDenied(data, opencodePatterns(root, paths))
	switch {
	case err != nil:
		return []Finding{{Loc: opencodeConfig, Msg: "not JSON: " + err.Error(), Hint: "fix it by hand, then run gate init --client opencode again"}}
	case len(open) == 0:
		return nil
	}
	return []Finding{{Loc: opencodeConfig, Warning: true,
		Msg:  "permission.edit does not deny " + strings.Join(open, ", ") + ": OpenCode's wall is down there, the guard alone refuses the write tools",
		Hint: `"gate init --client opencode" adds the deny rules and keeps the rest of the file`}}
}

// pluginCommands returns the plugin's programs, in the folder its line const BIN = "…"; names, as commands.
func pluginCommands(data []byte) []string {
	var bin string
	if _, rest, ok := bytes.Cut(data, []byte("\nconst BIN = ")); !ok || json.NewDecoder(bytes.NewReader(rest)).Decode(&bin) != nil {
		return nil
	}
	var out []string
	for _, p := range hook.Programs {
		out = append(out, cli.ShellQuote(path.Join(bin, p)))
	}
	return out
}
