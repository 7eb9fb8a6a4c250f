package gate

import (
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/detector"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/project"
	"github.com/stopgate/stopgate/internal/settings"
)

// runExplain is `gate explain PATH|/command`: which mappings a read of PATH,
// or the slash command, would arm, by which access pattern; or why none
// would, with the nearest keys. It decides exactly as detect does (the
// config's Index, detect's own parsing of commands). Exit 1 when nothing
// is armed, like grep finding nothing.
func runExplain(env *cli.Env, args []string) error {
	fl := flags("explain")
	configFile := fl.String("config", "", "the mappings `FILE` (default <root>/mappings.toml)")
	rest, err := parse(env, fl, args)
	if err != nil {
		return err
	}
	if len(rest) == 0 {
		return usageError("explain", fmt.Errorf("name a prompt file or a /command"))
	}
	ws := workspaceOf(env, *configFile)
	cfg, err := ws.load()
	if err != nil {
		return err
	}
	arg := strings.Join(rest, " ")
	var armed bool
	if isCommand(env, arg) {
		armed = explainCommand(env, ws, cfg, detector.SlashCommand(arg))
	} else {
		armed = explainPath(env, ws, cfg, arg)
	}
	if !armed {
		return cli.Exit(1)
	}
	return nil
}

// isCommand tells "/joke" from "/abs/path/joke.md": a command is one word
// after the slash, and not a file that exists.
func isCommand(env *cli.Env, arg string) bool {
	name := detector.SlashCommand(arg)
	if name == "" || strings.Contains(name, "/") {
		return false
	}
	_, err := os.Stat(absFrom(env.Dir, arg))
	return err != nil
}

func explainCommand(env *cli.Env, ws workspace, cfg *config.Config, name string) bool {
	w := env.Stdout
	maps := cfg.MatchCommand(name)
	if len(maps) == 0 {
		fmt.Fprintf(w, "/%s arms nothing: no mapping's prompt key, with \"/\" written as \"-\", is %q\n", name, name)
		suggest(w, cfg, name, func(k string) string { return config.Command(k) })
		return false
	}
	fmt.Fprintf(w, "/%s arms %s (UserPromptExpansion, or a prompt starting with /%s):\n", name, plural(len(maps), "mapping", "mappings"), name)
	for _, m := range maps {
		why := fmt.Sprintf("the command is the key %q", m.Prompt)
		if config.Command(m.Prompt) != m.Prompt {
			why += ` with "/" written as "-"`
		}
		printMapping(w, ws, cfg, m, why)
	}
	noteUnregistered(env, ws, hook.UserPromptExpansion, hook.UserPromptSubmit)
	return true
}

func explainPath(env *cli.Env, ws workspace, cfg *config.Config, arg string) bool {
	w := env.Stdout
	abs := absFrom(env.Dir, arg)
	rel, inside := project.Rel(ws.root, abs)
	switch {
	case !inside:
		fmt.Fprintf(w, "a read of %s arms nothing: it is outside the project root %s\n", arg, ws.root)
		return false
	case !strings.HasSuffix(rel, ".md"):
		fmt.Fprintf(w, "a read of %s arms nothing: detect only looks at reads of .md files\n", rel)
		return false
	}
	maps := cfg.MatchPath(rel)
	if len(maps) == 0 {
		fmt.Fprintf(w, "a read of %s arms nothing: %s\n", rel, whyNot(cfg, rel))
		key, form := keyOf(cfg, rel)
		if key != "" {
			suggest(w, cfg, key, form)
		}
		return false
	}
	if !project.Inside(ws.root, abs) {
		fmt.Fprintf(w, "a read of %s arms nothing: it is a symlink leading out of the project, which detect never follows\n", rel)
		return false
	}
	fmt.Fprintf(w, "a read of %s arms %s (PostToolUse of Read):\n", rel, plural(len(maps), "mapping", "mappings"))
	for _, m := range maps {
		printMapping(w, ws, cfg, m, pattern(cfg, m.Prompt, rel))
	}
	if _, err := os.Stat(abs); err != nil {
		fmt.Fprintf(w, "note: %s does not exist, so the agent cannot read it yet\n", rel)
	}
	noteUnregistered(env, ws, hook.PostToolUse)
	return true
}

// pattern says which of a key's access patterns rel is.
func pattern(cfg *config.Config, key, rel string) string {
	paths := cfg.Paths(key)
	d := config.Command(key)
	switch rel {
	case paths[0]:
		return fmt.Sprintf("matched <prompts_dir>/<key>.md, with prompts_dir = %q", cfg.Settings.PromptsDir)
	case paths[1]:
		return fmt.Sprintf("matched .claude/commands/<command>.md, the command %q being the key%s", d, dashNote(key))
	case paths[2]:
		return fmt.Sprintf("matched -/<command>.md, the command %q being the key%s", d, dashNote(key))
	}
	return "matched"
}

func dashNote(key string) string {
	if config.Command(key) != key {
		return ` with "/" written as "-"`
	}
	return ""
}

func printMapping(w io.Writer, ws workspace, cfg *config.Config, m *config.Mapping, why string) {
	fmt.Fprintf(w, "  prompt %q (%s:%d): %s\n", m.Prompt, ws.rel(cfg.File), m.Line, why)
	fmt.Fprintf(w, "    validators: %s\n", strings.Join(m.Validators, ", "))
}

// whyNot explains a .md path inside the root that matches no mapping.
func whyNot(cfg *config.Config, rel string) string {
	key, _ := keyOf(cfg, rel)
	switch {
	case strings.HasPrefix(rel, ".claude/commands/") || strings.HasPrefix(rel, "-/"):
		return fmt.Sprintf("no mapping's prompt key, with \"/\" written as \"-\", is %q", key)
	case key != "":
		return fmt.Sprintf("no mapping has prompt = %q", key)
	}
	return fmt.Sprintf("it is not under prompts_dir (%q), .claude/commands or -/, where prompt files are matched", cfg.Settings.PromptsDir)
}

// keyOf returns the key a prompt file at rel would have, and how keys are
// compared for it (as is, or in command form).
func keyOf(cfg *config.Config, rel string) (string, func(string) string) {
	asIs := func(k string) string { return k }
	name := strings.TrimSuffix(rel, ".md")
	for _, dir := range []string{".claude/commands/", "-/"} {
		if d, ok := strings.CutPrefix(name, dir); ok && !strings.Contains(d, "/") {
			return d, config.Command
		}
	}
	dir := strings.TrimPrefix(path.Clean(filepath.ToSlash(cfg.Settings.PromptsDir)), "./")
	if k, ok := strings.CutPrefix(name, dir+"/"); ok {
		return k, asIs
	}
	if dir == "." {
		return name, asIs
	}
	return "", asIs
}

// suggest names mapped keys close to key: the same last element, or a few
// letters apart.
func suggest(w io.Writer, cfg *config.Config, key string, form func(string) string) {
	var near []string
	for _, m := range cfg.Mappings {
		k := form(m.Prompt)
		if path.Base(k) == path.Base(key) || distance(k, key) <= 2 {
			near = append(near, fmt.Sprintf("%q", m.Prompt))
		}
	}
	if len(near) > 0 {
		fmt.Fprintf(w, "  did you mean %s?\n", strings.Join(near, " or "))
	} else {
		fmt.Fprintf(w, "  %s\n", knownPrompts(cfg))
	}
}

// distance is the Levenshtein distance of a and b.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur := make([]int, len(rb)+1)
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(rb)]
}

// noteUnregistered adds a note when none of the settings files registers
// detect for events: the mapping would arm, but nothing would tell it.
func noteUnregistered(env *cli.Env, ws workspace, events ...string) {
	want := wanted(projectBin)
	var relevant []settings.Hook
	for _, h := range want {
		if settings.Program(h.Command) == "detect" && slices.Contains(events, h.Event) {
			relevant = append(relevant, h)
		}
	}
	files := []string{filepath.Join(ws.root, ".claude", "settings.json"), filepath.Join(ws.root, ".claude", "settings.local.json")}
	if home := env.Getenv("HOME"); home != "" {
		files = append(files, filepath.Join(home, ".claude", "settings.json"))
	}
	for _, h := range relevant {
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			if found, err := settings.Lookup(data, []settings.Hook{h}); err == nil && found[0].Registered {
				return
			}
		}
	}
	if len(relevant) > 0 {
		fmt.Fprintf(env.Stdout, "note: %s is not registered in %s, so nothing sees this yet (gate init)\n", relevant[0], settingsFile)
	}
}
