package config

import "strings"

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

// A Name is one way the client names a prompt: a root-relative file whose
// Read arms it, or a slash command (without "/").
type Name struct {
	File, Command string
	Layout        string
}

// Names returns every name of the prompt key, files first, each once: the
// one decision detect, reconciliation, explain, run and check all use
// (the table in docs/config.md#mapping).
func Names(promptsDir, key string) []Name {
	if IsPluginKey(key) {
		names := []Name{{Command: key, Layout: LayoutPlugin}}
		if plugin, name, _ := strings.Cut(key, ":"); plugin != "" && name != "" && !strings.Contains(name, ":") {
			// The Skill tool and a typed /notes run myplugin:notes too.
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

// IsPluginKey reports whether key is a plugin's "plugin:name".
func IsPluginKey(key string) bool { return strings.Contains(key, ":") }

// mayName reports whether rel could be a file Names returns: detect's
// cheap test before any table is read.
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

// KeyOf returns the key, and layout, whose Names would include rel, for a
// hint when nothing is mapped to it; "" for a path no layout covers.
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

// Spelling folds "git:commit", "git-commit" and "git/commit" into one.
func Spelling(name string) string {
	return strings.NewReplacer(":", "/", "-", "/").Replace(strings.TrimPrefix(name, "/"))
}
