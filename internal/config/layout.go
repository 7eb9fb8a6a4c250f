package config

import (
	"cmp"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stopgate/stopgate/internal/project"
)

// Access patterns, as Name.Layout reports them.
const (
	LayoutPromptsDir = "prompts_dir"    // <prompts_dir>/K.md
	LayoutCommand    = "command"        // .claude/commands/K.md, run as /a:b:c
	LayoutDashed     = "dashed command" // .claude/commands/a-b-c.md, run as /a-b-c
	LayoutMirror     = "-/ mirror"      // -/a-b-c.md
	LayoutSkill      = "skill"          // .claude/skills/K/SKILL.md, run as /K or by the Skill tool
	LayoutPlugin     = "plugin"         // a plugin's command or skill, run as /plugin:name
	LayoutPluginBare = "plugin, bare"   // the same by its bare name: /name, or the Skill tool's "name"

	commandsDir = ".claude/commands/" // the folders, besides prompts_dir, of Names' files
	skillsDir   = ".claude/skills/"
	mirrorDir   = "-/"
	skillFile   = "SKILL.md"
)

// A Name is a root-relative file whose Read arms a prompt, or a command.
type Name struct {
	File, Command string
	Layout        string
}

// Names returns every name of the prompt key, files first (docs/config.md).
func Names(promptsDir, key string) []Name {
	if IsPluginKey(key) {
		names := []Name{{Command: key, Layout: LayoutPlugin}}
		if plugin, name, _ := strings.Cut(key, ":"); plugin != "" && name != "" && !strings.Contains(name, ":") {
			names = append(names, Name{Command: name, Layout: LayoutPluginBare})
		}
		return names
	}
	d := Command(key)
	rest := []Name{{File: commandsDir + key + ".md", Layout: LayoutCommand}, {File: mirrorDir + d + ".md", Layout: LayoutMirror},
		{File: skillsDir + key + "/" + skillFile, Layout: LayoutSkill}, {Command: key, Layout: LayoutCommand}}
	if d != key { // nested: the client's a:b:c, and the older flat a-b-c
		rest = []Name{rest[0], {File: commandsDir + d + ".md", Layout: LayoutDashed}, rest[1],
			{Command: strings.ReplaceAll(key, "/", ":"), Layout: LayoutCommand}, {Command: d, Layout: LayoutDashed}}
	}
	// Only the prompts_dir file can be another's (prompts_dir = ".claude/commands").
	names := []Name{{File: cleanJoin(promptsDir, key+".md"), Layout: LayoutPromptsDir}}
	for _, n := range rest {
		if n.File == "" || n.File != names[0].File {
			names = append(names, n)
		}
	}
	return names
}

// IsPluginKey reports whether key is a plugin's "plugin:name".
func IsPluginKey(key string) bool { return strings.Contains(key, ":") }

// mayName reports whether rel could be a file Names returns. Not KeyOf,
// which names one key a file: a prompts_dir under .claude/skills/ holds
// files KeyOf gives no key.
func mayName(promptsDir, rel string) bool {
	return strings.HasSuffix(rel, ".md") && slices.ContainsFunc([]string{commandsDir, skillsDir, mirrorDir, cleanJoin(promptsDir, "")},
		func(dir string) bool { return strings.HasPrefix(rel, dir) })
}

// KeyOf returns the key and layout whose Names would include rel, or "".
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
	if k, ok := strings.CutPrefix(name, cleanJoin(promptsDir, "")); ok {
		return k, LayoutPromptsDir
	}
	return "", ""
}

// Spelling folds "git:commit", "git-commit" and "git/commit" into one.
func Spelling(name string) string {
	return strings.NewReplacer(":", "/", "-", "/").Replace(strings.TrimPrefix(name, "/"))
}

// Names returns every name of the prompt key.
func (c *Config) Names(key string) []Name { return Names(c.Settings.PromptsDir, key) }

// Files returns the root-relative paths whose read arms the prompt key.
func (c *Config) Files(key string) []string { return c.names(key, true) }

// Commands returns the slash commands, without "/", that arm the prompt key.
func (c *Config) Commands(key string) []string { return c.names(key, false) }

func (c *Config) names(key string, files bool) []string {
	var out []string
	for _, n := range c.Names(key) {
		if s := cmp.Or(n.Command, n.File); s != "" && (n.File != "") == files {
			out = append(out, s)
		}
	}
	return out
}

// MatchPath returns the mappings a read of the root-relative rel arms.
func (c *Config) MatchPath(rel string) ([]*Mapping, error) {
	if !mayName(c.Settings.PromptsDir, rel) {
		return nil, nil // most reads: the mappings need not be read
	}
	return c.match('p', rel)
}

// MatchCommand returns the mappings armed by the slash command /name.
func (c *Config) MatchCommand(name string) ([]*Mapping, error) { return c.match('c', name) }

// match returns the mappings a path ('p') or command ('c') key arms.
func (c *Config) match(kind byte, key string) ([]*Mapping, error) {
	var cached []Mapping
	var maps []*Mapping
	if ok, err := c.fromCache(kind, key, false, &cached); ok || err != nil {
		for i := range cached {
			maps = append(maps, &cached[i])
		}
		return maps, err
	}
	if c.index == nil {
		c.index = c.tables()
	}
	for _, i := range c.index[string(kind)+key] {
		maps = append(maps, &c.Mappings[i])
	}
	return maps, nil
}

// Mapping returns the mapping of prompt key, or nil.
func (c *Config) Mapping(key string) *Mapping {
	if i := slices.IndexFunc(c.Mappings, func(m Mapping) bool { return m.Prompt == key }); i >= 0 {
		return &c.Mappings[i]
	}
	return nil
}

// tables maps each "p"+file and "c"+command to the mappings they arm.
func (c *Config) tables() map[string][]int {
	t := make(map[string][]int, 6*len(c.Mappings))
	for i, m := range c.Mappings {
		for _, n := range c.Names(m.Prompt) {
			key := "p" + n.File
			if n.File == "" {
				key = "c" + n.Command
			}
			if s := t[key]; len(s) == 0 || s[len(s)-1] != i {
				t[key] = append(s, i)
			}
		}
	}
	return t
}

func cleanJoin(dir, name string) string {
	if dir = path.Clean(dir); dir == "." || dir == "/" {
		return name
	}
	return dir + "/" + name
}

// Runs returns the run validators with their Name and Run (for the guard).
func (c *Config) Runs() ([]*Validator, error) {
	var pairs [][2]string // name, run: the guard's lookup decodes no more
	var runs []*Validator
	if ok, err := c.fromCache('r', "", true, &pairs); ok || err != nil {
		for _, run := range pairs {
			runs = append(runs, &Validator{Name: run[0], ValidatorKeys: ValidatorKeys{Run: run[1]}})
		}
		return runs, err
	}
	for _, name := range c.Order {
		if v := c.Validators[name]; v.Run != "" {
			runs = append(runs, v)
		}
	}
	return runs, nil
}

// Validator returns the validator called name, or nil when there is none.
func (c *Config) Validator(name string) (*Validator, error) {
	var v *Validator
	if ok, err := c.fromCache('v', name, false, &v); ok || err != nil {
		return v, err
	}
	return c.Validators[name], nil
}

// PromptPath is the absolute path of key's first existing file, else its prompts_dir one; "" for a plugin.
func (c *Config) PromptPath(key string) string {
	fs := c.Files(key)
	if len(fs) == 0 {
		return ""
	}
	return filepath.Join(c.Root, filepath.FromSlash(cmp.Or(c.existing(key), fs[0])))
}

// existing returns the first file among key's Names that exists, or "".
func (c *Config) existing(key string) string {
	for _, f := range c.Files(key) {
		if st, err := os.Stat(filepath.Join(c.Root, filepath.FromSlash(f))); err == nil && !st.IsDir() {
			return f
		}
	}
	return ""
}

// A Read is the judgement of a Read of one file: the mappings it arms.
type Read struct {
	Path    string // as the client gives it: absolute
	Rel     string // Path relative to the root
	Target  string // the mapped name it reached: Rel, or where a symlink leads
	Maps    []*Mapping
	Outside bool // a mapped name, but a symlink leading out of the project
}

// ReadOf returns the unjudged Read of a .md file inside root.
func ReadOf(root, path string) (Read, bool) {
	if !strings.HasSuffix(path, ".md") {
		return Read{}, false
	}
	rel, ok := project.Rel(root, path)
	return Read{Path: path, Rel: rel, Target: rel}, ok
}

// MatchRead returns the mappings a Read of absolute path arms.
func (c *Config) MatchRead(path string) ([]*Mapping, error) {
	r, err := c.JudgeRead(path)
	return r.Maps, err
}

// JudgeRead judges a Read of absolute path.
func (c *Config) JudgeRead(path string) (r Read, err error) {
	if r, ok := ReadOf(c.Root, path); ok {
		return r, c.Judge(&r)
	}
	return r, nil
}

// Judge judges r, from ReadOf: it arms the mappings one of whose Names is
// the file's path or a symlink's target inside the project; a mapped name
// that is a symlink out of the project is not the project's prompt.
func (c *Config) Judge(r *Read) error {
	maps, err := c.MatchPath(r.Rel)
	if err != nil {
		return err
	}
	if len(maps) > 0 {
		if r.Outside = !project.Inside(c.Root, r.Path); !r.Outside {
			r.Maps = maps
		}
		return nil
	}
	real, err := filepath.EvalSymlinks(r.Path)
	if err != nil || real == filepath.Clean(r.Path) {
		return nil
	}
	realRoot, err := filepath.EvalSymlinks(c.Root)
	if err != nil {
		realRoot = c.Root
	}
	target, ok := project.Rel(realRoot, real)
	if !ok {
		return nil
	}
	if r.Maps, err = c.MatchPath(target); len(r.Maps) > 0 {
		r.Target = target
	}
	return err
}
