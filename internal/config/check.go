package config

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/validator"
)

// Depth says how far Inspect looks beyond mappings.toml itself.
type Depth int

const (
	FileOnly Depth = iota // the file alone: the gate at every stop
	Project               // and the run programs and prompt files it names: gate check
)

// Inspect loads and checks the config at file: the config as far as it
// could be read, every problem by line, an error if the file is unreadable.
func Inspect(file, root string, depth Depth) (*Config, Problems, error) {
	data, err := readText(file)
	if err != nil {
		return nil, nil, err
	}
	cfg, p := parse(data, file, root)
	if cfg != nil {
		p.unused(cfg)
		if depth >= Project {
			p.programs(cfg)
			p.promptFiles(cfg)
		}
		p.locate(cfg)
	}
	ps := p.problems
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Line < ps[j].Line })
	return cfg, ps, nil
}

// warn adds a problem that does not stop the config from loading.
func (p *parser) warn(key, msg, hint string) {
	p.add(key, msg, hint)
	p.problems[len(p.problems)-1].Warning = true
}

// unused warns of validators no mapping names, and of no mappings.
func (p *parser) unused(cfg *Config) {
	if len(cfg.Mappings) == 0 {
		p.warn("", "no [[mapping]]: nothing will be checked",
			`add one: [[mapping]] prompt = "key" validators = ["name"]`)
	}
	used := map[string]bool{}
	for _, m := range cfg.Mappings {
		for _, v := range m.Validators {
			used[v] = true
		}
	}
	for _, name := range cfg.Order {
		if !used[name] {
			p.warn("validators."+name, fmt.Sprintf("validator %q is not used by any mapping", name),
				"list it in a [[mapping]]'s validators, or delete it")
		}
	}
}

// programs finds run validators whose program cannot start.
func (p *parser) programs(cfg *Config) {
	for _, name := range cfg.Order {
		v := cfg.Validators[name]
		if v.Run == "" {
			continue
		}
		if why := validator.Unrunnable(cfg.Root, v.Run); why != "" {
			hint := "the gate runs it with sh -c from the project root; as it is, it fails at every stop"
			if strings.Contains(why, "not executable") {
				hint = "make it executable, or run it through its interpreter: run = \"sh " + strings.Fields(v.Run)[0] + "\""
			}
			p.add("validators."+name+".run", "cannot start: "+why, hint)
		}
	}
}

// promptFiles warns of mappings with no file, naming a respelling that has one.
func (p *parser) promptFiles(cfg *Config) {
	for i, m := range cfg.Mappings {
		if msg, _ := badPromptKey(m.Prompt); msg != "" || cfg.existing(m.Prompt) != "" {
			continue
		}
		key := fmt.Sprintf("mapping[%d].prompt", i)
		alt, file := respelt(cfg, m.Prompt)
		if IsPluginKey(m.Prompt) {
			if alt != "" {
				p.warn(key, fmt.Sprintf("prompt %q names a plugin's command, but %s is the project's /%s", m.Prompt, file, m.Prompt),
					fmt.Sprintf("did you mean prompt = %q? It is armed by a read of %s as well", alt, file))
			}
			continue
		}
		msg := fmt.Sprintf("prompt %q has no file: none of %s exists", m.Prompt, strings.Join(cfg.Files(m.Prompt), ", "))
		hint := fmt.Sprintf("it fires only on %s; check the key's spelling and prompts_dir", "/"+strings.Join(cfg.Commands(m.Prompt), " or /"))
		if alt != "" {
			hint = fmt.Sprintf("did you mean prompt = %q? %s exists", alt, file)
		}
		p.warn(key, msg, hint)
	}
}

// respelt returns key in another spelling whose file exists, and that file.
func respelt(cfg *Config, key string) (alt, file string) {
	for _, k := range []string{Spelling(key), strings.ReplaceAll(key, ":", "/"), Command(key)} {
		if msg, _ := badPromptKey(k); msg != "" || k == key || cfg.Mapping(k) != nil {
			continue
		}
		if f := cfg.existing(k); f != "" {
			return k, f
		}
	}
	return "", ""
}

// Problem is one mistake in a config file, located by line and key.
type Problem struct {
	File    string // as shown to a person: relative to the project root when inside it
	Line    int    // 0 when unknown
	Key     string // dotted TOML key, e.g. validators.joke-file.regex
	Msg     string
	Hint    string // how to fix it, or ""
	Warning bool   // a warning does not stop the config from loading
}

func (p *Problem) Error() string {
	s := p.File
	if p.Line > 0 {
		s += fmt.Sprintf(":%d", p.Line)
	}
	if p.Key != "" {
		s += ": " + cli.Visible(p.Key, true)
	}
	return s + ": " + cli.Visible(p.Msg, true)
}

// Problems is every mistake found in one load, in file order.
type Problems []*Problem

func (ps Problems) Error() string {
	var msgs []string
	for _, err := range ps.Unwrap() {
		msgs = append(msgs, err.Error())
	}
	return strings.Join(msgs, "; ")
}

func (ps Problems) Unwrap() []error {
	errs := make([]error, len(ps))
	for i, p := range ps {
		errs[i] = p
	}
	return errs
}

// Lines is each problem on its own line, each hint indented under it.
func (ps Problems) Lines() []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Error())
		if p.Hint != "" {
			out = append(out, "  hint: "+p.Hint)
		}
	}
	return out
}

// Errors returns the problems that are not warnings.
func (ps Problems) Errors() Problems {
	return slices.DeleteFunc(slices.Clone(ps), func(p *Problem) bool { return p.Warning })
}
