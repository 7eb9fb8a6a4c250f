package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/project"
	"github.com/stopgate/stopgate/internal/settings"
)

// Codex is OpenAI Codex: its events and fields are Claude Code's, with
// turn_id and model added. It has no read tool: a PostToolUse of Bash
// reads what the guard's dry run of its command reads (detect asks
// guard.ShellReads, as for every client's shell tool); apply_patch writes the
// files its patch names, each judged by the guard as a Write. It honours
// Claude Code's answers as they are (decision block with a reason,
// continue:false, permissionDecision deny), so they are written unchanged.
var Codex = &Client{
	Name: codexAnswers{}.Name(), Title: "Codex",
	HookFile: ".codex/hooks.json",
	Settings: []string{".codex/config.toml"}, // [hooks], [features], hook trust
	Hooks: []Hook{
		{hook.PostToolUse, "Bash", hook.Detect, 10}, // reads are shell commands
		{hook.UserPromptSubmit, "", hook.Detect, 10},
		{hook.PreToolUse, "Bash|apply_patch", hook.Detect, 10},
		{hook.Stop, "", hook.Gate, 600},
		{hook.SubagentStop, "", hook.Gate, 600},
		{hook.UserPromptSubmit, "", hook.Testhook, 10},
		{hook.Stop, "", hook.Testhook, 600},
	},
	Timeout:  600 * time.Second,
	Unit:     1,
	WallLeft: "the wall is Codex's own sandbox for shell commands (bubblewrap): with the permission profile up, the protected set is read-only to every command and to apply_patch; a command or patch the user approves outside the sandbox, and a session started with --sandbox, --dangerously-bypass-approvals-and-sandbox or a sandbox_mode anywhere in Codex's config are the guard's alone",
	Trust:    "Codex runs a project's hooks only once you trust them: review .codex/hooks.json and trust it when Codex asks (codex exec skips untrusted hooks silently; --dangerously-bypass-hook-trust is for throwaway sandboxes only)",
	Limits: []string{
		"Codex has no read tool: detect arms the files a Bash command reads, as the guard's dry run resolves it (cat, sed -n, head, tail, nl, less, grep/rg with a file operand, < redirection; through cd, globs, variables, env, timeout, xargs, find -exec); a file read any other way (a script, python -c) does not arm",
		"Codex has no slash-command expansion event: a prompt armed by a slash command arms only when the prompt starts with it",
	},
	answers: codexAnswers{},
	decode:  decodeCodex,
	where:   ownFiles,
	lines:   lines(func(l *codexLine) bool { return l.Type == "response_item" }, `"function_call"`, `"local_shell_call"`, `"role":"user"`),
	Wall:    codexWall{},
}

type codexAnswers struct{ claudeAnswers }

func (codexAnswers) Name() string { return "codex" }

// Halt: Codex ends the session on a halt but shows only "hook: Stop
// Stopped" (neither stopReason nor systemMessage reaches the user), so a
// stop's halt is first a block that relays its reason through the model,
// once; the next failing stop is the halt itself.
func (codexAnswers) Halt(reason string, relayed bool) (hook.Output, bool) {
	if relayed {
		return hook.Halt(reason), false
	}
	return hook.Block(hook.HaltRelay(reason)), true
}

func decodeCodex(data []byte, _ string) (*hook.Input, error) {
	in, err := hook.Unmarshal(data)
	if err != nil {
		return nil, err
	}
	in.Client, in.ClientEvent = codexAnswers{}, in.HookEventName
	if in.ToolName == "apply_patch" {
		// Codex's own tool, whose input hook.Unmarshal leaves alone: only
		// the files its patch writes matter, as guard calls.
		var ti struct {
			Command string `json:"command"`
		}
		json.Unmarshal(in.ToolInput, &ti)
		in.Calls = writes(PatchFiles(ti.Command))
	}
	return in, nil
}

// writes returns a guard call of Write for each file.
func writes(files []string) []hook.Call {
	calls := []hook.Call{}
	for _, f := range files {
		calls = append(calls, hook.Call{Tool: "Write", Input: hook.ToolInput{FilePath: f}})
	}
	return calls
}

// patchHeaders are the lines of an apply_patch envelope that name a file
// it adds, changes, deletes or moves to.
var patchHeaders = []string{"*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "}

// PatchFiles returns the files an apply_patch envelope (Codex's and
// Copilot's edit tool) writes, as the patch names them.
func PatchFiles(patch string) []string {
	var out []string
	for _, line := range strings.Split(patch, "\n") {
		line = strings.TrimRight(line, "\r")
		for _, h := range patchHeaders {
			if f, ok := strings.CutPrefix(line, h); ok && strings.TrimSpace(f) != "" {
				out = append(out, strings.TrimSpace(f))
			}
		}
	}
	return out
}

// Codex records a session in a rollout JSONL ($CODEX_HOME/sessions/…), a
// subagent in its own (agent_transcript_path). What the gate reads there:
//
//	{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"cat p.md\",\"workdir\":…}"}}
//	{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<hook_prompt hook_run_id=\"stop:…\">REASON</hook_prompt>"}]}}
//	{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"what a person typed"}]}}
//
// A read is a shell command, judged by the analysis detect uses (Shell).
type codexLine struct {
	stamp
	Type    string `json:"type"`
	Payload struct {
		Type      string          `json:"type"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Action    json.RawMessage `json:"action"` // local_shell_call
		Role      string          `json:"role"`
		Content   []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	} `json:"payload"`
}

func (*codexLine) agent() string { return "" } // a rollout is one thread's

func (l *codexLine) reads(cwd string, sh Shell) []string {
	var a map[string]any
	switch l.Payload.Type {
	case "function_call":
		a = args(l.Payload.Arguments)
	case "local_shell_call":
		a = args(l.Payload.Action)
	default:
		return nil
	}
	cmd := shellText(a["cmd"])
	if cmd == "" {
		cmd = shellText(a["command"])
	}
	if cmd == "" {
		return nil
	}
	if d, _ := a["workdir"].(string); d != "" {
		cwd = abs(d, cwd)
	}
	return sh(cmd, cwd)
}

func (*codexLine) command() string { return "" } // a skill is read with a shell command: a read

func (l *codexLine) text() (string, bool) {
	if l.Payload.Type != "message" || l.Payload.Role != "user" {
		return "", false
	}
	var texts []string
	for _, c := range l.Payload.Content {
		if c.Type == "input_text" {
			texts = append(texts, c.Text)
		}
	}
	return strings.Join(texts, "\n"), len(texts) > 0
}

func (l *codexLine) typed() (string, bool) {
	t, ok := l.text()
	// Codex's own insertions (environment, instructions, hook prompts) are
	// tagged; what a person typed is not.
	return t, ok && !strings.HasPrefix(t, "<")
}

func (l *codexLine) block() (string, string, bool) {
	t, ok := l.text()
	if !ok || !strings.HasPrefix(t, "<hook_prompt ") {
		return "", "", false
	}
	_, reason, _ := strings.Cut(t, ">")
	return reason, "", true
}

// Codex's wall is a permission profile in the project's .codex/config.toml
// (read in a trusted project): every command Codex runs is in bubblewrap
// with the whole disk read-only but the workspace, the temp dir and the
// workspace's protected paths read-only again, so neither a write nor a
// rename nor the creation of a missing protected path goes through
// (observed on codex-cli 0.169.0: "Read-only file system", "Device or
// resource busy"). A sandbox_mode in any loaded config, or --sandbox,
// makes Codex use its older settings instead: then the wall is down.
const (
	codexConfig  = ".codex/config.toml"
	codexProfile = "stopgate"
	codexRoots   = `[permissions.` + codexProfile + `.filesystem.":project_roots"]`
)

// codexReadOnly returns the workspace-relative paths the profile keeps
// read-only: Codex's own folder, which holds the hooks and this file, and
// the protected set inside the project (outside it, all is read-only).
//
// Codex refuses every command when a read-only path is a symlink ("crosses
// writable symlink"): a symlink's target stands in for it.
func codexReadOnly(root string, paths []Path) []string {
	out := []string{".codex"}
	realRoot, _ := filepath.EvalSymlinks(root)
	for _, p := range paths {
		show := p.Show
		if st, err := os.Lstat(filepath.FromSlash(p.Path)); err == nil && st.Mode()&fs.ModeSymlink != 0 {
			real, err := filepath.EvalSymlinks(filepath.FromSlash(p.Path))
			r, inside := project.Rel(realRoot, real)
			if err != nil || !inside {
				continue // outside the project, all is read-only
			}
			show = r
		}
		if filepath.IsAbs(filepath.FromSlash(show)) || slices.Contains(out, show) || strings.HasPrefix(show, ".codex/") {
			continue // outside, listed, or inside .codex, which is read-only whole
		}
		out = append(out, show)
	}
	return out
}

// codexState is what a Codex config says about the wall.
type codexState struct {
	sandboxMode string            // set: Codex uses the older settings
	profile     string            // default_permissions
	fs          map[string]any    // permissions.stopgate.filesystem
	roots       map[string]string // its ":project_roots"
}

func inspectCodex(data []byte) (codexState, error) {
	var doc struct {
		SandboxMode        string `toml:"sandbox_mode"`
		DefaultPermissions string `toml:"default_permissions"`
		Permissions        map[string]struct {
			Filesystem map[string]any `toml:"filesystem"`
		} `toml:"permissions"`
	}
	if _, err := toml.Decode(string(data), &doc); err != nil {
		return codexState{}, err
	}
	st := codexState{sandboxMode: doc.SandboxMode, profile: doc.DefaultPermissions, roots: map[string]string{}}
	st.fs = doc.Permissions[codexProfile].Filesystem
	if r, ok := st.fs[":project_roots"].(map[string]any); ok {
		for k, v := range r {
			s, _ := v.(string)
			st.roots[k] = s
		}
	}
	return st, nil
}

// lacking returns the paths of want the profile does not keep read-only.
func (st codexState) lacking(want []string) []string {
	var out []string
	for _, p := range want {
		if st.roots[p] != "read" {
			out = append(out, p)
		}
	}
	return out
}

// holes returns the writable entries inside a read-only path: a deeper
// rule wins in Codex.
func (st codexState) holes(want []string) []string {
	var out []string
	for k, v := range st.roots {
		for _, p := range want {
			if v != "read" && strings.HasPrefix(k, p+"/") {
				out = append(out, k)
			}
		}
	}
	slices.Sort(out)
	return out
}

// codexEntries renders the read-only entries of paths.
func codexEntries(paths []string) string {
	var b strings.Builder
	for _, p := range paths {
		fmt.Fprintf(&b, "%s = \"read\"\n", strconv.Quote(p))
	}
	return b.String()
}

// mergeCodexWall returns data with the wall added, keeping every byte of
// it: default_permissions goes before the first table, the profile after
// the last; a profile init wrote earlier gets the entries it lacks. note
// is why it was left alone, when it was.
func mergeCodexWall(data []byte, want []string) (out []byte, added []string, note string, err error) {
	st, err := inspectCodex(data)
	if err != nil {
		return nil, nil, "", err
	}
	switch {
	case st.sandboxMode != "":
		return data, nil, "sandbox_mode = " + strconv.Quote(st.sandboxMode) + " makes Codex use its older sandbox settings instead of the permission profile", nil
	case st.profile != "" && st.profile != codexProfile:
		return data, nil, "default_permissions = " + strconv.Quote(st.profile) + " selects another permission profile", nil
	}
	lack := st.lacking(want)
	if st.profile == codexProfile && len(lack) == 0 {
		return data, nil, "", nil
	}
	// Appending is safe only where init left its table last.
	if st.fs != nil && lastTable(data) != codexRoots {
		return data, nil, "its permission profile " + codexProfile + " lacks " + strings.Join(lack, ", ") + ": add them as \"read\" under " + codexRoots, nil
	}
	out = bytes.Clone(data)
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	if st.fs != nil {
		out = append(out, codexEntries(lack)...)
		added = append(added, lack...)
	} else {
		out = append(out, codexWallHead...)
		out = append(out, codexEntries(want)...)
		added = append(added, "permissions."+codexProfile+" with "+cli.Plural(len(want), "read-only path", "read-only paths")+": "+strings.Join(want, ", "))
	}
	if st.profile == "" {
		out = append([]byte("default_permissions = \""+codexProfile+"\"\n"), out...)
		added = append([]string{"default_permissions = \"" + codexProfile + "\""}, added...)
	}
	if back, err := inspectCodex(out); err != nil || len(back.lacking(want)) > 0 || back.profile != codexProfile {
		return nil, nil, "", fmt.Errorf("the merged file does not keep the paths read-only (%v): add the profile by hand", err)
	}
	return out, added, "", nil
}

// lastTable returns the last table header in data, trimmed.
func lastTable(data []byte) string {
	last := ""
	for _, l := range strings.Split(string(data), "\n") {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "[") {
			last = t
		}
	}
	return last
}

// codexWall is Codex's permission profile (Wall).
type codexWall struct{}

func (codexWall) File() string { return codexConfig }

func (codexWall) Ready(string) error { return nil }

// Up merges the wall into .codex/config.toml.
func (codexWall) Up(w io.Writer, root string, paths []Path) error {
	path := filepath.Join(root, filepath.FromSlash(codexConfig))
	data, err := settings.ReadIfThere(path)
	if err != nil {
		return err
	}
	want := codexReadOnly(root, paths)
	out, added, note, err := mergeCodexWall(data, want)
	if err != nil {
		return fmt.Errorf("%s: %w", codexConfig, err)
	}
	switch {
	case note != "":
		fmt.Fprintf(w, "note: %s: %s; left as it is: the guard alone stands\n", codexConfig, note)
	case len(added) == 0:
		fmt.Fprintf(w, "%s: Codex's sandbox wall is already there (%s)\n", codexConfig, cli.Plural(len(want), "read-only path", "read-only paths"))
	default:
		if err := settings.WriteFile(path, out); err != nil {
			return fmt.Errorf("writing %s: %w", codexConfig, err)
		}
		fmt.Fprintf(w, "%s: Codex's sandbox wall: added\n", codexConfig)
		for _, a := range added {
			fmt.Fprintf(w, "  + %s\n", a)
		}
	}
	return nil
}

// Check says whether the profile is up in the project's config, and
// whether the user's config switches Codex to its older settings.
func (codexWall) Check(getenv func(string) string, root string, paths []Path) []Finding {
	hint := `"gate init --client codex" adds the permission profile and keeps the rest of the file`
	var out []Finding
	home := getenv("CODEX_HOME")
	if home == "" {
		home = filepath.Join(getenv("HOME"), ".codex")
	}
	if data, err := settings.ReadIfThere(filepath.Join(home, "config.toml")); err == nil && data != nil {
		if st, err := inspectCodex(data); err == nil && st.sandboxMode != "" {
			out = append(out, Finding{Loc: filepath.Join(home, "config.toml"), Warning: true,
				Msg:  "sandbox_mode = " + strconv.Quote(st.sandboxMode) + ": Codex uses its older sandbox settings instead of the permission profile: Codex's wall is down",
				Hint: "remove sandbox_mode, or keep it knowing the guard alone stands"})
		}
	}
	data, err := settings.ReadIfThere(filepath.Join(root, filepath.FromSlash(codexConfig)))
	if err != nil {
		return append(out, Finding{Loc: codexConfig, Msg: err.Error()})
	}
	st, err := inspectCodex(data)
	if err != nil {
		return append(out, Finding{Loc: codexConfig, Msg: "not TOML: " + err.Error(), Hint: "fix it by hand, then run gate init --client codex again"})
	}
	want := codexReadOnly(root, paths)
	down := func(msg string) Finding {
		return Finding{Loc: codexConfig, Warning: true, Msg: msg + ": Codex's wall is down, so the agent's shell can write the protected set in ways the guard cannot see", Hint: hint}
	}
	switch {
	case st.sandboxMode != "":
		out = append(out, down("sandbox_mode = "+strconv.Quote(st.sandboxMode)+" makes Codex use its older sandbox settings"))
	case st.profile != codexProfile:
		out = append(out, down("default_permissions is not "+strconv.Quote(codexProfile)))
	}
	if lack := st.lacking(want); len(lack) > 0 {
		out = append(out, down("the permission profile "+codexProfile+" does not keep "+strings.Join(lack, ", ")+" read-only"))
	}
	if h := st.holes(want); len(h) > 0 {
		out = append(out, down("the permission profile "+codexProfile+" makes "+strings.Join(h, ", ")+" writable inside a protected path"))
	}
	return out
}

// codexWallHead is the start of the profile mergeCodexWall appends.
const codexWallHead = "\n# stopgate's wall (gate init --client codex): every command Codex runs may write\n# the workspace and the temp dir, but not what checks the agent.\n[permissions." + codexProfile + ".filesystem]\n\":root\" = \"read\"\n\":slash_tmp\" = \"write\"\n\n" + codexRoots + "\n\".\" = \"write\"\n"

var codexReadLine = regexp.MustCompile(`^"(?:[^"\\]|\\.)*" = "read"$`)

// Remove takes the wall out of the config (removeCodexWall).
func (codexWall) Remove(data []byte, _ string, _ []Path) (out []byte, r settings.Removal, gone bool, err error) {
	out, r.Removed, r.Left, err = removeCodexWall(data)
	var pe toml.ParseError
	if errors.As(err, &pe) {
		return nil, r, false, settings.ErrorAt(data, pe.Position.Start, "%s", pe.Message)
	}
	return out, r, len(bytes.TrimSpace(out)) == 0, err
}

// removeCodexWall is mergeCodexWall's inverse: it takes out the
// default_permissions line it put first and the profile it appended last,
// while that is still its header and read-only entries alone; left names
// what was changed since. A file that is not TOML is refused.
func removeCodexWall(data []byte) (out []byte, removed, left []string, err error) {
	st, err := inspectCodex(data)
	if err != nil {
		return nil, nil, nil, err
	}
	out = data
	if i := bytes.LastIndex(out, []byte(codexWallHead)); i >= 0 && codexReads(out[i+len(codexWallHead):]) {
		out = out[:i:i]
		removed = append(removed, "permissions."+codexProfile)
	} else if st.fs != nil {
		left = append(left, "permissions."+codexProfile+": it is not as gate init wrote it")
	}
	if line := "default_permissions = \"" + codexProfile + "\"\n"; bytes.HasPrefix(out, []byte(line)) {
		out = out[len(line):]
		removed = append([]string{strings.TrimSpace(line)}, removed...)
	}
	return out, removed, left, nil
}

// codexReads reports whether tail is only "path" = "read" lines.
func codexReads(tail []byte) bool {
	for _, l := range strings.SplitAfter(string(tail), "\n") {
		if l != "" && (!strings.HasSuffix(l, "\n") || !codexReadLine.MatchString(strings.TrimSuffix(l, "\n"))) {
			return false
		}
	}
	return true
}
