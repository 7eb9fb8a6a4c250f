package gate

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/guard"
	"github.com/stopgate/stopgate/internal/project"
	"github.com/stopgate/stopgate/internal/settings"
)

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
func codexReadOnly(root string, set *guard.Set) []string {
	out := []string{".codex"}
	realRoot, _ := filepath.EvalSymlinks(root)
	for _, p := range set.Paths() {
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
		added = append(added, "permissions."+codexProfile+" with "+plural(len(want), "read-only path", "read-only paths")+": "+strings.Join(want, ", "))
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

// writeCodexWall merges the wall into .codex/config.toml.
func writeCodexWall(env *cli.Env, root string, set *guard.Set) error {
	path := filepath.Join(root, filepath.FromSlash(codexConfig))
	data, err := readIfThere(path)
	if err != nil {
		return err
	}
	want := codexReadOnly(root, set)
	out, added, note, err := mergeCodexWall(data, want)
	if err != nil {
		return fmt.Errorf("%s: %w", codexConfig, err)
	}
	switch {
	case note != "":
		fmt.Fprintf(env.Stdout, "note: %s: %s; left as it is: the guard alone stands\n", codexConfig, note)
	case len(added) == 0:
		fmt.Fprintf(env.Stdout, "%s: Codex's sandbox wall is already there (%s)\n", codexConfig, plural(len(want), "read-only path", "read-only paths"))
	default:
		if err := settings.WriteFile(path, out); err != nil {
			return fmt.Errorf("writing %s: %w", codexConfig, err)
		}
		fmt.Fprintf(env.Stdout, "%s: Codex's sandbox wall: added\n", codexConfig)
		for _, a := range added {
			fmt.Fprintf(env.Stdout, "  + %s\n", a)
		}
	}
	return nil
}

// codexWallFindings says whether the profile is up in the project's
// config, and whether the user's config switches Codex to its older
// settings.
func codexWallFindings(env *cli.Env, ws workspace, set *guard.Set) []finding {
	hint := `"gate init --client codex" adds the permission profile and keeps the rest of the file`
	var out []finding
	home := env.Getenv("CODEX_HOME")
	if home == "" {
		home = filepath.Join(env.Getenv("HOME"), ".codex")
	}
	if data, err := readIfThere(filepath.Join(home, "config.toml")); err == nil && data != nil {
		if st, err := inspectCodex(data); err == nil && st.sandboxMode != "" {
			out = append(out, finding{loc: filepath.Join(home, "config.toml"), warning: true,
				msg:  "sandbox_mode = " + strconv.Quote(st.sandboxMode) + ": Codex uses its older sandbox settings instead of the permission profile: Codex's wall is down",
				hint: "remove sandbox_mode, or keep it knowing the guard alone stands"})
		}
	}
	data, err := readIfThere(filepath.Join(ws.root, filepath.FromSlash(codexConfig)))
	if err != nil {
		return append(out, finding{loc: codexConfig, msg: err.Error()})
	}
	st, err := inspectCodex(data)
	if err != nil {
		return append(out, finding{loc: codexConfig, msg: "not TOML: " + err.Error(), hint: "fix it by hand, then run gate init --client codex again"})
	}
	want := codexReadOnly(ws.root, set)
	down := func(msg string) finding {
		return finding{loc: codexConfig, warning: true, msg: msg + ": Codex's wall is down, so the agent's shell can write the protected set in ways the guard cannot see", hint: hint}
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
