package client

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
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

// Codex is OpenAI Codex: Claude Code's events, fields and answers; no read tool (Bash reads as the guard's dry run).
var Codex = &Client{
	Name: "codex", Title: "Codex",
	HookFile: ".codex/hooks.json",
	Settings: []string{codexConfig},                   // [hooks], [features], hook trust
	Hooks:    claudeHooks("Bash", "Bash|apply_patch"), // reads are shell commands
	Timeout:  600 * time.Second,
	WallLeft: "the wall is Codex's own sandbox for shell commands (bubblewrap): with the permission profile up, the protected set is read-only to every command and to apply_patch; a command or patch the user approves outside the sandbox, and a session started with --sandbox, --dangerously-bypass-approvals-and-sandbox or a sandbox_mode anywhere in Codex's config are the guard's alone",
	Trust:    "Codex runs a project's hooks only once you trust them: review .codex/hooks.json and trust it when Codex asks (codex exec skips untrusted hooks silently; --dangerously-bypass-hook-trust is for throwaway sandboxes only)",
	Limits: []string{
		"Codex has no read tool: detect arms the files a Bash command reads, as the guard's dry run resolves it (cat, sed -n, head, tail, nl, less, grep/rg with a file operand, < redirection; through cd, globs, variables, env, timeout, xargs, find -exec); a file read any other way (a script, python -c) does not arm",
		"Codex has no slash-command expansion event: a prompt armed by a slash command arms only when the prompt starts with it",
	},
	halt: codexHalt,
	input: &shape{drop: []string{"tool_response"}, fix: func(m payload, _ string) (more, error) {
		return more{calls: patchWrites(m, "command")}, nil // apply_patch, Codex's own tool
	}},
	lines: lineOf(codexShow, `"function_call"`, `"local_shell_call"`, `"role":"user"`),
	Wall:  codexWall{},
}

// codexHalt: Codex shows a halt only as "hook: Stop Stopped": it is first a block relaying it, once.
func codexHalt(reason string, relayed bool) (hook.Output, bool) {
	if relayed {
		return hook.Halt(reason), false
	}
	return hook.Block(hook.HaltRelay(reason)), true
}

// codexLine is a line of Codex's rollout: a shell call, or a user message (a block: <hook_prompt …>).
type codexLine struct {
	stamp
	Type    string `json:"type"`
	Payload struct {
		Type      string          `json:"type"`
		Arguments json.RawMessage `json:"arguments"`
		Action    json.RawMessage `json:"action"` // local_shell_call
		Role      string          `json:"role"`
		Content   []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	} `json:"payload"`
}

func codexShow(l *codexLine, e *entry, r reader) {
	p := l.Payload
	switch {
	case l.Type != "response_item":
	case p.Type == "function_call" || p.Type == "local_shell_call": // a skill is read so too
		a := args(map[bool]json.RawMessage{true: p.Arguments, false: p.Action}[p.Type == "function_call"])
		if cmd := cmp.Or(shellText(a["cmd"]), shellText(a["command"])); cmd != "" {
			e.reads = r.shell(cmd, a)
		}
	case p.Type == "message" && p.Role == "user":
		var texts []string
		for _, c := range p.Content {
			if c.Type == "input_text" {
				texts = append(texts, c.Text)
			}
		}
		t := strings.Join(texts, "\n")
		if rest, ok := strings.CutPrefix(t, "<hook_prompt "); ok {
			_, reason, _ := strings.Cut(rest, ">")
			e.block = &reason
		} else if texts != nil && !strings.HasPrefix(t, "<") { // Codex's own insertions are tagged
			e.typed = &t
		}
	}
}

// shellText returns a shell tool's command: a string, or an argv (`bash -lc SCRIPT`: SCRIPT).
func shellText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []any:
		if len(v) >= 3 {
			s, ok := v[len(v)-1].(string)
			if flag, _ := v[len(v)-2].(string); ok && strings.HasPrefix(flag, "-") && strings.Contains(flag, "c") {
				return s
			}
		}
		var words []string
		for _, w := range v {
			s, _ := w.(string)
			words = append(words, cli.ShellQuote(s))
		}
		return strings.Join(words, " ")
	}
	return ""
}

// Codex's wall is a permission profile in .codex/config.toml (docs/clients.md): a sandbox_mode takes it down.
const (
	codexConfig  = ".codex/config.toml"
	codexProfile = "stopgate"
	codexRoots   = `[permissions.` + codexProfile + `.filesystem.":project_roots"]`
	// codexWallHead starts the profile mergeCodexWall appends, codexDefault first.
	codexWallHead = "\n# stopgate's wall (gate init --client codex): every command Codex runs may write\n# the workspace and the temp dir, but not what checks the agent.\n[permissions." + codexProfile + ".filesystem]\n\":root\" = \"read\"\n\":slash_tmp\" = \"write\"\n\n" + codexRoots + "\n\".\" = \"write\"\n"
	codexDefault  = "default_permissions = \"" + codexProfile + "\"\n"
)

// codexReadOnly returns the paths the profile keeps read-only, as Codex takes them (codexFault): a glob as its
// folder, a symlink as its target, a path not there left out but a folder, which Up makes.
func codexReadOnly(root string, paths []Path) []string {
	out := []string{".codex"}
	realRoot, _ := filepath.EvalSymlinks(root)
	for _, p := range paths {
		show := p.Show
		if i := strings.IndexAny(show, "*?[]"); i >= 0 {
			show = strings.TrimSuffix(filepath.ToSlash(filepath.Dir(show[:i]+"x")), "/")
		}
		if st, err := os.Lstat(filepath.FromSlash(p.Path)); err == nil && st.Mode()&fs.ModeSymlink != 0 {
			real, err := filepath.EvalSymlinks(filepath.FromSlash(p.Path))
			r, inside := project.Rel(realRoot, real)
			if err != nil || !inside {
				continue // outside the project, all is read-only
			}
			show = r
		}
		if filepath.IsAbs(filepath.FromSlash(show)) || show == "." || slices.ContainsFunc(out, func(l string) bool { return show == l || strings.HasPrefix(show, l+"/") }) {
			continue
		}
		if f, missing := codexFault(root, show, "read"); f != "" && !(p.Dir && missing != "") {
			continue
		}
		out = append(out, show)
	}
	all := slices.Clone(out)
	return slices.DeleteFunc(out, func(p string) bool { // but those inside a folder listed after them
		return slices.ContainsFunc(all, func(q string) bool { return strings.HasPrefix(p, q+"/") })
	})
}

// codexFault says what Codex (0.171.0) does with the entry key = access ("" takes it): a glob but "/**" stops Codex;
// a path not there is bound as an empty file at its first missing folder, missing.
func codexFault(root, key, access string) (fault, missing string) {
	if access == "deny" || strings.HasPrefix(key, ":") || key == "." {
		return "", ""
	}
	if strings.ContainsAny(strings.TrimSuffix(key, "/**"), "*?[]") {
		return "filesystem glob path `" + key + "` only supports `deny` access: Codex refuses to start", ""
	}
	path := abs(filepath.FromSlash(strings.TrimSuffix(key, "/**")), root)
	if _, err := os.Lstat(path); err == nil {
		return "", ""
	}
	for dir := filepath.Dir(path); dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		if _, err := os.Lstat(dir); err == nil {
			break
		}
		path = dir
	}
	missing = project.Display(root, path)
	return key + " is not there: Codex's sandbox binds an empty file at " + missing, missing
}

// codexOwn finds the profile init wrote, still its header and "path" = "read" lines: its start and paths.
func codexOwn(data []byte) (start int, keys []string, ok bool) {
	start = bytes.LastIndex(data, []byte(codexWallHead))
	if start < 0 {
		return 0, nil, false
	}
	tail := string(data[start+len(codexWallHead):])
	md, err := toml.Decode(tail, new(map[string]any))
	for _, k := range md.Keys() {
		keys = append(keys, k[0])
	}
	return start, keys, err == nil && codexEntries(keys) == tail
}

// codexState is what a Codex config says about the wall: a sandbox_mode makes Codex use its older settings.
type codexState struct {
	SandboxMode string `toml:"sandbox_mode"`
	Profile     string `toml:"default_permissions"`
	Permissions map[string]struct {
		Filesystem map[string]any `toml:"filesystem"`
	} `toml:"permissions"`
}

func inspectCodex(data []byte) (st codexState, err error) {
	_, err = toml.Decode(string(data), &st)
	return st, err
}

// roots are the entries of stopgate's profile from the project root.
func (st codexState) roots() map[string]any {
	roots, _ := st.Permissions[codexProfile].Filesystem[":project_roots"].(map[string]any)
	return roots
}

// lacking returns the paths of want stopgate's profile does not keep read-only.
func (st codexState) lacking(want []string) []string {
	return slices.DeleteFunc(slices.Clone(want), func(p string) bool { return st.roots()[p] == "read" })
}

// codexEntries renders the read-only entries of paths.
func codexEntries(paths []string) string {
	var b strings.Builder
	for _, p := range paths {
		fmt.Fprintf(&b, "%s = \"read\"\n", strconv.Quote(p))
	}
	return b.String()
}

// legacy says what the config's sandbox_mode does; "": it sets none.
func (st codexState) legacy() string {
	if st.SandboxMode == "" {
		return ""
	}
	return "sandbox_mode = " + strconv.Quote(st.SandboxMode) + " makes Codex use its older sandbox settings"
}

// mergeCodexWall returns data with the wall added, every byte kept; note says why it was left alone.
func mergeCodexWall(data []byte, want []string) (out []byte, added []string, note string, err error) {
	st, err := inspectCodex(data)
	switch {
	case err != nil:
		return nil, nil, "", err
	case st.legacy() != "":
		return data, nil, st.legacy() + " instead of the permission profile", nil
	case st.Profile != "" && st.Profile != codexProfile:
		return data, nil, "default_permissions = " + strconv.Quote(st.Profile) + " selects another permission profile", nil
	}
	lack := st.lacking(want)
	if st.Profile == codexProfile && len(lack) == 0 {
		return data, nil, "", nil
	}
	last := "" // appending is safe only where init's table is last
	for l := range strings.Lines(string(data)) {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "[") {
			last = t
		}
	}
	if st.Permissions[codexProfile].Filesystem != nil && last != codexRoots {
		return data, nil, "its permission profile " + codexProfile + " lacks " + strings.Join(lack, ", ") + ": add them as \"read\" under " + codexRoots, nil
	}
	out = bytes.Clone(data)
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	if st.Permissions[codexProfile].Filesystem != nil {
		out, added = append(out, codexEntries(lack)...), lack
	} else {
		out = append(out, codexWallHead+codexEntries(want)...)
		added = []string{"permissions." + codexProfile + " with " + cli.Plural(len(want), "read-only path", "read-only paths") + ": " + strings.Join(want, ", ")}
	}
	if st.Profile == "" {
		out = append([]byte(codexDefault), out...)
		added = append([]string{strings.TrimSpace(codexDefault)}, added...)
	}
	if back, err := inspectCodex(out); err != nil || len(back.lacking(want)) > 0 || back.Profile != codexProfile {
		return nil, nil, "", fmt.Errorf("the merged file does not keep the paths read-only (%v): add the profile by hand", err)
	}
	return out, added, "", nil
}

// codexWall is Codex's permission profile (Wall).
type codexWall struct{}

func (codexWall) File() string { return codexConfig }

func (codexWall) Ready(string) error { return nil }

func (codexWall) Up(w io.Writer, root string, paths []Path) error {
	path := filepath.Join(root, filepath.FromSlash(codexConfig))
	data, err := settings.ReadIfThere(path)
	if err != nil {
		return err
	}
	for _, p := range paths { // make the protected folders not there yet; one that cannot be made stays out
		if _, inside := project.Rel(root, p.Path); inside && p.Dir && !strings.ContainsAny(p.Path, "*?[]") {
			os.MkdirAll(filepath.FromSlash(p.Path), 0o755)
		}
	}
	var dropped []string // the entries Codex does not take, in a profile an older init wrote
	if start, keys, ok := codexOwn(data); ok {
		var kept []string
		for _, k := range keys {
			if f, _ := codexFault(root, k, "read"); f != "" {
				dropped = append(dropped, f)
			} else {
				kept = append(kept, k)
			}
		}
		if dropped != nil {
			data = append(bytes.Clone(data[:start]), codexWallHead+codexEntries(kept)...)
		}
	}
	want := codexReadOnly(root, paths)
	out, added, note, err := mergeCodexWall(data, want)
	switch {
	case err != nil:
		return fmt.Errorf("%s: %w", codexConfig, err)
	case note != "":
		fmt.Fprintf(w, "note: %s: %s; left as it is: the guard alone stands\n", codexConfig, note)
		return nil
	case len(added) == 0 && len(dropped) == 0:
		fmt.Fprintf(w, "%s: Codex's sandbox wall is already there (%s)\n", codexConfig, cli.Plural(len(want), "read-only path", "read-only paths"))
		return nil
	}
	if err := settings.WriteFile(path, out); err != nil {
		return fmt.Errorf("writing %s: %w", codexConfig, err)
	}
	fmt.Fprintf(w, "%s: Codex's sandbox wall: %s\n", codexConfig, map[bool]string{true: "added", false: "entries Codex does not take removed"}[len(added) > 0])
	for _, a := range added {
		fmt.Fprintf(w, "  + %s\n", a)
	}
	for _, d := range dropped {
		fmt.Fprintf(w, "  - %s\n", d)
	}
	return nil
}

func (codexWall) Check(getenv func(string) string, root string, paths []Path) []Finding {
	var out []Finding
	user := filepath.Join(cmp.Or(getenv("CODEX_HOME"), filepath.Join(getenv("HOME"), ".codex")), "config.toml")
	data, _ := os.ReadFile(user) // none, or not TOML: it sets no sandbox_mode
	if st, _ := inspectCodex(data); st.SandboxMode != "" {
		out = append(out, Finding{Loc: user, Warning: true,
			Msg:  "sandbox_mode = " + strconv.Quote(st.SandboxMode) + ": Codex uses its older sandbox settings instead of the permission profile: Codex's wall is down",
			Hint: "remove sandbox_mode, or keep it knowing the guard alone stands"})
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
	down := []string{st.legacy()}
	if st.legacy() == "" && st.Profile != codexProfile {
		down[0] = "default_permissions is not " + strconv.Quote(codexProfile)
	}
	if lack := st.lacking(want); len(lack) > 0 {
		down = append(down, "the permission profile "+codexProfile+" does not keep "+strings.Join(lack, ", ")+" read-only")
	}
	roots := st.roots() // a writable entry inside a read-only path is a hole: a deeper rule wins in Codex
	if holes := slices.DeleteFunc(slices.Sorted(maps.Keys(roots)), func(k string) bool {
		return roots[k] == "read" || !slices.ContainsFunc(want, func(p string) bool { return strings.HasPrefix(k, p+"/") })
	}); len(holes) > 0 {
		down = append(down, "the permission profile "+codexProfile+" makes "+strings.Join(holes, ", ")+" writable inside a protected path")
	}
	for _, msg := range slices.DeleteFunc(down, func(m string) bool { return m == "" }) {
		out = append(out, Finding{Loc: codexConfig, Warning: true, Msg: msg + ": Codex's wall is down, so the agent's shell can write the protected set in ways the guard cannot see",
			Hint: `"gate init --client codex" adds the permission profile and keeps the rest of the file`})
	}
	if st.SandboxMode == "" {
		out = append(out, codexFaults(root, st.Permissions[st.Profile].Filesystem)...)
	}
	return out
}

// codexFaults are the entries Codex does not take: an error where Codex or bubblewrap refuses (two entries at one
// missing folder), a warning where a folder cannot be made.
func codexFaults(root string, fs map[string]any) []Finding {
	hint := `run "gate init --client codex" again, which writes only entries Codex takes, or fix the entry by hand`
	var out []Finding
	at := map[string][]string{} // missing folder → its entries' faults
	add := func(key string, access any) {
		a, _ := access.(string)
		if fault, missing := codexFault(root, key, a); missing != "" {
			at[missing] = append(at[missing], fault)
		} else if fault != "" {
			out = append(out, Finding{Loc: codexConfig, Msg: fault, Hint: hint})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(fs)) {
		scoped, ok := fs[k].(map[string]any)
		for _, sub := range slices.Sorted(maps.Keys(scoped)) {
			switch {
			case k == ":project_roots" || k == ":workspace_roots":
				add(sub, scoped[sub]) // from the project root
			case !strings.HasPrefix(k, ":"):
				add(path.Join(k, sub), scoped[sub])
			}
		}
		if !ok {
			add(k, fs[k])
		}
	}
	for missing, fs := range at {
		f := Finding{Loc: codexConfig, Warning: len(fs) == 1, Msg: strings.Join(fs, "; "), Hint: hint}
		if !f.Warning {
			f.Msg += ": bubblewrap refuses every sandboxed command (Can't bind mount " + missing + ")"
		}
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b Finding) int { return strings.Compare(a.Msg, b.Msg) })
	return out
}

// Remove is mergeCodexWall's inverse while the profile is as init wrote it; r.Left names what changed.
func (codexWall) Remove(data []byte, _ string, _ []Path) (out []byte, r settings.Removal, gone bool, err error) {
	st, err := inspectCodex(data)
	if pe, ok := errors.AsType[toml.ParseError](err); ok {
		return nil, r, false, settings.ErrorAt(data, pe.Position.Start, "%s", pe.Message)
	} else if err != nil {
		return nil, r, false, err
	}
	out = data
	if i, _, ok := codexOwn(out); ok {
		out = out[:i:i]
		r.Removed = append(r.Removed, "permissions."+codexProfile)
	} else if st.Permissions[codexProfile].Filesystem != nil {
		r.Left = append(r.Left, "permissions."+codexProfile+": it is not as gate init wrote it")
	}
	if rest, ok := bytes.CutPrefix(out, []byte(codexDefault)); ok {
		out = rest
		r.Removed = append([]string{strings.TrimSpace(codexDefault)}, r.Removed...)
	}
	return out, r, len(bytes.TrimSpace(out)) == 0, nil
}
