package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
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
// the protected set inside the project (outside it, all is read-only), as
// far as Codex takes them (codexFault): a glob (the npm packages' programs,
// as a launcher finds them) stands for the folder above its first pattern,
// and a path that is not there is left out, but a folder (the state dir),
// which Up makes.
//
// Codex refuses every command when a read-only path is a symlink ("crosses
// writable symlink"): a symlink's target stands in for it.
func codexReadOnly(root string, paths []Path) []string {
	out := []string{".codex"}
	realRoot, _ := filepath.EvalSymlinks(root)
	for _, p := range paths {
		show := codexUnglob(p.Show)
		if st, err := os.Lstat(filepath.FromSlash(p.Path)); err == nil && st.Mode()&fs.ModeSymlink != 0 {
			real, err := filepath.EvalSymlinks(filepath.FromSlash(p.Path))
			r, inside := project.Rel(realRoot, real)
			if err != nil || !inside {
				continue // outside the project, all is read-only
			}
			show = r
		}
		if filepath.IsAbs(filepath.FromSlash(show)) || show == "." || codexCovered(out, show) {
			continue // outside, the workspace itself, or inside a listed path
		}
		if f, missing := codexFault(root, show, "read"); f != "" && !(p.Dir && missing != "") {
			continue // a folder not there yet is made first (codexMakeDirs)
		}
		out = append(out, show)
	}
	var kept []string // but those inside a folder listed after them
	for _, p := range out {
		if !slices.ContainsFunc(out, func(q string) bool { return strings.HasPrefix(p, q+"/") }) {
			kept = append(kept, p)
		}
	}
	return kept
}

// codexUnglob returns the folders of path above its first glob pattern,
// path itself when it has none.
func codexUnglob(path string) string {
	i := strings.IndexAny(path, "*?[]")
	if i < 0 {
		return path
	}
	return strings.TrimSuffix(filepath.ToSlash(filepath.Dir(path[:i]+"x")), "/")
}

// codexCovered reports whether path is one of listed or inside one.
func codexCovered(listed []string, path string) bool {
	return slices.ContainsFunc(listed, func(l string) bool { return path == l || strings.HasPrefix(path, l+"/") })
}

// codexFault says what Codex (0.171.0, codex-rs/core/src/config/permissions.rs
// and its bubblewrap sandbox) does with the filesystem entry key = access
// of a permission profile, key relative to the project root at root (or
// absolute, or a :special): "" when it takes it as it is. A read or write
// entry whose key holds * ? [ or ] (but a trailing "/**") makes Codex
// refuse to start ("filesystem glob path … only supports deny access"). A
// path that is not there is bound as an empty file at its first missing
// folder, missing: that folder cannot be made in the sandbox, and two
// entries under one missing folder make bubblewrap refuse every command
// ("Can't bind mount").
func codexFault(root, key, access string) (fault, missing string) {
	if access == "deny" || strings.HasPrefix(key, ":") || key == "." {
		return "", ""
	}
	if strings.ContainsAny(strings.TrimSuffix(key, "/**"), "*?[]") {
		return "filesystem glob path `" + key + "` only supports `deny` access: Codex refuses to start", ""
	}
	path := filepath.FromSlash(strings.TrimSuffix(key, "/**"))
	if !filepath.IsAbs(path) {
		path = filepath.Join(root, path)
	}
	if _, err := os.Lstat(path); err == nil {
		return "", ""
	}
	for dir := filepath.Dir(path); dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		if _, err := os.Lstat(dir); err == nil {
			break
		}
		path = dir
	}
	missing = path
	if r, ok := project.Rel(root, path); ok {
		missing = r
	}
	return key + " is not there: Codex's sandbox binds an empty file at " + missing, missing
}

// codexMakeDirs makes the protected folders that are not there yet (the
// state dir, which the gate would make at the first stop), so that the
// profile can hold them: Codex binds only what is there (codexFault).
func codexMakeDirs(root string, paths []Path) {
	for _, p := range paths {
		if _, inside := project.Rel(root, p.Path); inside && p.Dir && !strings.ContainsAny(p.Path, "*?[]") {
			os.MkdirAll(filepath.FromSlash(p.Path), 0o755) // one that cannot be made is left out of the profile
		}
	}
}

// dropCodexFaults takes out of a profile gate init wrote (its header and
// read-only entries alone) the entries Codex does not take (codexFault),
// as an older gate init wrote them; it says which.
func dropCodexFaults(data []byte, root string) ([]byte, []string) {
	i := bytes.LastIndex(data, []byte(codexWallHead))
	if i < 0 || !codexReads(data[i+len(codexWallHead):]) {
		return data, nil
	}
	out := bytes.Clone(data[:i+len(codexWallHead)])
	var dropped []string
	for _, l := range strings.SplitAfter(string(data[i+len(codexWallHead):]), "\n") {
		key, _ := strconv.Unquote(strings.TrimSuffix(strings.TrimSuffix(l, "\n"), ` = "read"`))
		if f, _ := codexFault(root, key, "read"); f != "" {
			dropped = append(dropped, f)
			continue
		}
		out = append(out, l...)
	}
	if dropped == nil {
		return data, nil
	}
	return out, dropped
}

// codexState is what a Codex config says about the wall.
type codexState struct {
	sandboxMode string            // set: Codex uses the older settings
	profile     string            // default_permissions
	fs          map[string]any    // permissions.stopgate.filesystem
	active      map[string]any    // the filesystem of the profile default_permissions selects
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
	st.active = doc.Permissions[doc.DefaultPermissions].Filesystem
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
	codexMakeDirs(root, paths)
	want := codexReadOnly(root, paths)
	data, dropped := dropCodexFaults(data, root)
	out, added, note, err := mergeCodexWall(data, want)
	if err != nil {
		return fmt.Errorf("%s: %w", codexConfig, err)
	}
	switch {
	case note != "":
		fmt.Fprintf(w, "note: %s: %s; left as it is: the guard alone stands\n", codexConfig, note)
	case len(added) == 0 && len(dropped) == 0:
		fmt.Fprintf(w, "%s: Codex's sandbox wall is already there (%s)\n", codexConfig, cli.Plural(len(want), "read-only path", "read-only paths"))
	default:
		if err := settings.WriteFile(path, out); err != nil {
			return fmt.Errorf("writing %s: %w", codexConfig, err)
		}
		did := "added"
		if len(added) == 0 {
			did = "entries Codex does not take removed"
		}
		fmt.Fprintf(w, "%s: Codex's sandbox wall: %s\n", codexConfig, did)
		for _, a := range added {
			fmt.Fprintf(w, "  + %s\n", a)
		}
		for _, d := range dropped {
			fmt.Fprintf(w, "  - %s\n", d)
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
	if st.sandboxMode == "" {
		out = append(out, codexFaults(root, st.active)...)
	}
	return out
}

// codexFaults are the entries of the filesystem table fs (a profile's) that
// Codex does not take as they are (codexFault): an error where Codex
// refuses to start or bubblewrap refuses every command (two entries bound
// at one missing folder), a warning where a missing folder cannot be made.
func codexFaults(root string, fs map[string]any) []Finding {
	var faults []string
	at := map[string][]string{} // missing folder → its entries' faults
	add := func(key string, access any) {
		a, _ := access.(string)
		fault, missing := codexFault(root, key, a)
		switch {
		case missing != "":
			at[missing] = append(at[missing], fault)
		case fault != "":
			faults = append(faults, fault)
		}
	}
	// In key order: the findings, and the faults joined at one folder,
	// read the same at every run.
	for _, k := range slices.Sorted(maps.Keys(fs)) {
		v := fs[k]
		if scoped, ok := v.(map[string]any); ok {
			for _, sub := range slices.Sorted(maps.Keys(scoped)) {
				a := scoped[sub]
				switch {
				case k == ":project_roots" || k == ":workspace_roots":
					add(sub, a) // from the project root
				case !strings.HasPrefix(k, ":"):
					add(path.Join(k, sub), a)
				}
			}
			continue
		}
		add(k, v)
	}
	hint := `run "gate init --client codex" again, which writes only entries Codex takes, or fix the entry by hand`
	var out []Finding
	for _, f := range faults {
		out = append(out, Finding{Loc: codexConfig, Msg: f, Hint: hint})
	}
	for _, missing := range slices.Sorted(maps.Keys(at)) {
		fs := at[missing]
		f := Finding{Loc: codexConfig, Warning: len(fs) == 1, Msg: strings.Join(fs, "; "), Hint: hint}
		if !f.Warning {
			f.Msg += ": bubblewrap refuses every sandboxed command (Can't bind mount " + missing + ")"
		}
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b Finding) int { return strings.Compare(a.Msg, b.Msg) })
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
