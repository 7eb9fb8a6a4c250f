package config

import "strings"

// The prompt layouts: every name the client gives a prompt, decided here
// and only here. The index (detect, transcript reconciliation), gate
// explain, gate run and gate check all take their answer from Names, so
// that none of them can arm, or describe, a prompt another would not.

// Access patterns, as Name.Layout reports them.
const (
	LayoutPromptsDir = "prompts_dir"    // <prompts_dir>/K.md
	LayoutCommand    = "command"        // .claude/commands/K.md, run as /a:b:c
	LayoutDashed     = "dashed command" // .claude/commands/a-b-c.md, run as /a-b-c
	LayoutMirror     = "-/ mirror"      // -/a-b-c.md
	LayoutSkill      = "skill"          // .claude/skills/K/SKILL.md, run as /K or by the Skill tool
	LayoutPlugin     = "plugin"         // a plugin's command or skill, run as /plugin:name
	LayoutPluginBare = "plugin, bare"   // the same by its bare name: /name, or the Skill tool's "name"
)

// Folders, besides prompts_dir, under which Names puts prompt files.
const (
	commandsDir = ".claude/commands/"
	skillsDir   = ".claude/skills/"
	mirrorDir   = "-/"
	skillFile   = "SKILL.md"
)

// A Name is one way the client names a prompt: a file whose Read arms it
// (File, a slash path relative to the project root) or a slash command,
// typed or run by the Skill tool (Command, without "/").
type Name struct {
	File, Command string
	Layout        string
}

// Names returns every name of the prompt key under prompts_dir, files
// first, each once, in a fixed order:
//
//	key a/b/c (path segments)    <prompts_dir>/a/b/c.md, .claude/commands/a/b/c.md,
//	                             .claude/commands/a-b-c.md, -/a-b-c.md; /a:b:c, /a-b-c
//	key k (one segment)          <prompts_dir>/k.md, .claude/commands/k.md, -/k.md,
//	                             .claude/skills/k/SKILL.md; /k
//	key plugin:name              /plugin:name, /name: a plugin's command or skill, as
//	                             the client names it; no file, its files are the plugin's
//
// The client runs .claude/commands/git/commit.md as /git:commit, a folder
// being a ":" segment; the dashed forms are the older flat layout, kept,
// so keys "git/commit" and "git-commit" share /git-commit and
// .claude/commands/git-commit.md: a read of it arms both.
func Names(promptsDir, key string) []Name {
	if IsPluginKey(key) {
		names := []Name{{Command: key, Layout: LayoutPlugin}}
		if plugin, name, _ := strings.Cut(key, ":"); plugin != "" && name != "" && !strings.Contains(name, ":") {
			// The Skill tool runs a plugin's skill by its bare name too
			// (tool_input.skill "notes" for myplugin:notes), and so does a
			// typed /notes; a same-named command elsewhere arms it as well,
			// which fails closed.
			names = append(names, Name{Command: name, Layout: LayoutPluginBare})
		}
		return names
	}
	d := Command(key)
	nested := d != key
	names := make([]Name, 0, 6)
	add := func(n Name) {
		for _, o := range names {
			if o.File == n.File && o.Command == n.Command {
				return
			}
		}
		names = append(names, n)
	}
	add(Name{File: cleanJoin(promptsDir, key+".md"), Layout: LayoutPromptsDir})
	add(Name{File: commandsDir + key + ".md", Layout: LayoutCommand})
	if nested {
		add(Name{File: commandsDir + d + ".md", Layout: LayoutDashed})
	}
	add(Name{File: mirrorDir + d + ".md", Layout: LayoutMirror})
	if !nested {
		add(Name{File: skillsDir + key + "/" + skillFile, Layout: LayoutSkill})
	}
	if nested {
		add(Name{Command: strings.ReplaceAll(key, "/", ":"), Layout: LayoutCommand})
		add(Name{Command: d, Layout: LayoutDashed})
	} else {
		add(Name{Command: key, Layout: LayoutCommand})
	}
	return names
}

// IsPluginKey reports whether key names a plugin's command or skill
// (plugin:name) rather than a prompt file's path.
func IsPluginKey(key string) bool { return strings.Contains(key, ":") }

// mayName reports whether rel, a slash path relative to the root, has the
// shape of a file Names can return: a .md file under prompts_dir or one
// of the folders above. It is detect's cheap test before any table is
// read; layout_test.go checks that it admits every file Names gives.
func mayName(promptsDir, rel string) bool {
	if !strings.HasSuffix(rel, ".md") {
		return false
	}
	if strings.HasPrefix(rel, commandsDir) || strings.HasPrefix(rel, skillsDir) || strings.HasPrefix(rel, mirrorDir) {
		return true
	}
	prompts := strings.TrimSuffix(cleanJoin(promptsDir, "x"), "x")
	return strings.HasPrefix(rel, prompts)
}

// KeyOf returns the key whose Names would include the file rel under the
// layout it looks like, for a hint when nothing is mapped to it:
// .claude/commands/git/commit.md is "git/commit", .claude/skills/x/SKILL.md
// is "x". It returns "" for a path no layout covers.
func KeyOf(promptsDir, rel string) (key, layout string) {
	if k, ok := strings.CutPrefix(rel, skillsDir); ok {
		if k, ok := strings.CutSuffix(k, "/"+skillFile); ok && k != "" && !strings.Contains(k, "/") {
			return k, LayoutSkill
		}
		return "", ""
	}
	name, ok := strings.CutSuffix(rel, ".md")
	if !ok {
		return "", ""
	}
	if k, ok := strings.CutPrefix(name, commandsDir); ok {
		return k, LayoutCommand
	}
	if k, ok := strings.CutPrefix(name, mirrorDir); ok && !strings.Contains(k, "/") {
		return k, LayoutMirror
	}
	dir := trimSlashes(promptsDir)
	if dir == "" || dir == "." {
		return name, LayoutPromptsDir
	}
	if k, ok := strings.CutPrefix(name, dir+"/"); ok {
		return k, LayoutPromptsDir
	}
	return "", ""
}

// Spelling folds the client's ways of writing a nested name, "git:commit",
// "git-commit" and "git/commit", into one, for "did you mean" hints.
func Spelling(name string) string {
	return strings.NewReplacer(":", "/", "-", "/").Replace(strings.TrimPrefix(name, "/"))
}
