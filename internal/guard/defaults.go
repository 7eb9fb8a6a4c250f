package guard

import (
	"path"
	"strings"

	"github.com/stopgate/stopgate/internal/shell"
)

// Source is what the guard needs of a project and its config.
type Source struct {
	Root     string
	Home     string // $HOME, for ~ in commands
	File     string // the config file in use
	StateDir string // absolute
	// Protect is [settings] protect: nil protects the defaults only, an
	// empty list turns the guard off, paths (relative to Root unless
	// absolute; a folder covers what is in it) are protected as well.
	Protect []string
	Runs    []Run
	// Commands are stopgate's own hook programs (bin/detect, bin/gate):
	// replacing one with `exit 0` would switch the gate off. Only those
	// inside Root are protected.
	Commands []string
	// Registered are the hook programs the clients' hook files register
	// (Registrations), absolute: protected wherever they are, since
	// replacing one switches the gate off as surely.
	Registered []string
	// Clients are the other clients' hook files and settings (trust.For
	// finds them).
	Clients []Protected
	// Transcript is the session's transcript (transcript_path), which the
	// gate checks the queue against: it and the session's folder of
	// subagent transcripts beside it are protected.
	Transcript string
}

// Run is a validator that runs a program.
type Run struct{ Name, Command string }

// ValidatorsDir is the folder name stopgate's convention gives to
// validator programs (the example project's, and gate init's): a folder
// of that name that holds a run validator is protected whole.
const ValidatorsDir = "validators"

// NpmScope is where npm puts stopgate's packages in a project.
const NpmScope = "node_modules/@stopgate"

// Entries returns the protected paths of a project, in order (none with
// protect = []; New makes them the guard's set):
//
//   - the state dir, which holds the pending checks;
//   - the config file in use;
//   - the files each run validator executes inside the project, as
//     shell.Files resolves its run line (the program, the script a shell
//     or an interpreter runs, and the files a shell script sources), or
//     the whole folder of one when that folder is named "validators";
//   - .claude/settings.json and .claude/settings.local.json, which
//     register the hooks, the other clients' hook files and settings
//     (Clients), stopgate's own hook programs when they live in the
//     project, and the programs the hook files register wherever they are;
//   - the project's npm packages of stopgate (NpmScope), found by a glob;
//   - the session's transcript and its subagents' transcripts;
//   - the paths in Protect.
//
// A validator's folder is protected whole only under the conventional
// name: validator scripts often source helpers beside them, which the
// script path alone leaves open, but a program that sits in scripts/,
// test/ or the root shares its folder with files the agent must be free to
// edit. Helpers elsewhere are added with protect.
func Entries(src Source) []Protected {
	if src.Protect != nil && len(src.Protect) == 0 {
		return nil
	}
	root := path.Clean(slash(src.Root))
	ps := []Protected{
		{Path: src.StateDir, Why: "it is stopgate's state dir, which holds the checks pending before you may stop", Dir: true},
		{Path: src.File, Why: "it is stopgate's config, which says what is checked before you may stop"},
	}
	// Thousands of validators usually share a few run lines: resolve each
	// once, and protect each file once (New would drop the repeats anyway,
	// after building them).
	files := map[string][]shell.File{}
	protected := map[string]bool{}
	for _, r := range src.Runs {
		key := shell.Key(r.Command)
		fs, ok := files[key]
		if !ok {
			fs = shell.Files(r.Command, root)
			files[key] = fs
		}
		for _, f := range fs {
			if protected[f.Path] {
				continue
			}
			protected[f.Path] = true
			if dir := path.Dir(f.Path); dir != root && path.Base(dir) == ValidatorsDir {
				ps = append(ps, Protected{Path: dir, Why: "it holds the program of the validator " + quote(r.Name)})
				continue
			}
			why := "it is the program of the validator " + quote(r.Name)
			if f.SourcedBy != "" {
				why = "the program of the validator " + quote(r.Name) + " sources it"
			}
			ps = append(ps, Protected{Path: f.Path, Why: why})
		}
	}
	for _, f := range claudeFiles {
		ps = append(ps, Protected{Path: root + "/" + f, Why: "it registers stopgate's hooks with Claude Code"})
	}
	ps = append(ps, src.Clients...)
	// npm's platform package is found by a glob (gate init's launcher, the
	// marketplace plugin's search): a package planted beside it, whose
	// name sorts first, would be the gate that runs.
	ps = append(ps, Protected{Path: root + "/" + NpmScope, Why: "it holds stopgate's npm packages, whose programs the hooks run", Dir: true, Planted: true})
	for _, c := range src.Commands {
		if c = shell.Abs(c, root); c != root && shell.Within(c, root) {
			ps = append(ps, Protected{Path: c, Why: "it is one of stopgate's hook programs"})
		}
	}
	for _, c := range src.Registered {
		if c = path.Clean(slash(c)); strings.HasPrefix(c, "/") && c != root {
			ps = append(ps, Protected{Path: c, Why: "it is one of stopgate's hook programs, as a client's hook file registers it"})
		}
	}
	if t := slash(src.Transcript); strings.HasPrefix(t, "/") && strings.HasSuffix(t, ".jsonl") && !shell.Within(root, path.Dir(t)) {
		why := "it is this session's transcript, which stopgate checks the queue against"
		ps = append(ps, Protected{Path: t, Why: why}, Protected{Path: strings.TrimSuffix(t, ".jsonl"), Why: why})
	}
	for _, p := range src.Protect {
		if strings.TrimSpace(p) == "" {
			continue
		}
		ps = append(ps, Protected{Path: shell.Abs(p, root), Why: "it is listed in [settings] protect of the stopgate config"})
	}
	return ps
}

func quote(s string) string { return `"` + s + `"` }
