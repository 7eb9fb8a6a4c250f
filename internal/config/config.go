// Package config loads mappings.toml strictly: every mistake is a Problem
// naming the file, the line and the key.
package config

import (
	"cmp"
	"crypto/sha256"
	_ "embed" // the starter mappings.toml
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/pattern"
	"github.com/stopgate/stopgate/internal/validator"
)

// The defaults and values of the keys (docs/config.md).
const (
	DefaultPromptsDir  = "src/prompts"
	DefaultStateDir    = "tmp/validation"
	DefaultTimeout     = validator.DefaultTimeout
	DefaultMaxBlocks   = 3
	DefaultOutputLines = 40
	DefaultOutputBytes = 64 << 10 // the gate holds every validator's output at once
	minOutputBytes     = 1 << 10
	maxOutputBytes     = 16 << 20

	OnFailureBlock = "block"   // on_failure: hand the failures to the agent, halt after max_blocks
	OnFailureHalt  = "halt"    // on_failure: halt the session at the first failing stop
	ModeEnforce    = "enforce" // mode: block and halt as the checks say
	ModeObserve    = "observe" // mode: judge every stop, record and tell what would be blocked, block nothing
	ConfineAuto    = ""        // no confine key: confine where bubblewrap works
	ConfineOn      = "on"      // confine = true: a stop that cannot confine them halts
	ConfineOff     = "off"     // confine = false: run validators as the gate runs
	ReuseAuto      = ""        // no reuse key: reuse where the state dir is walled off from the agent
	ReuseOn        = "on"      // reuse = true: reuse wherever, the user knowing the record could be forged
	ReuseOff       = "off"     // reuse = false: run every validator at every stop

	TelemetryHTTP           = "http/protobuf" // protocols, as OTEL_EXPORTER_OTLP_PROTOCOL names them
	TelemetryGRPC           = "grpc"
	DefaultTelemetryTimeout = 2 * time.Second // bounds an export per stop
	maxTelemetryTimeout     = 10 * time.Second

	APIAnthropic        = "anthropic" // a judge's API dialects
	APIOpenAI           = "openai"
	EvidenceChanged     = "changed" // the files changed since arming: diffs, or a new one's text
	DefaultEvidenceByte = 64 << 10
)

// Config is a loaded mappings.toml; its methods fail only on a bad cache.
type Config struct {
	File       string // path of the file it was loaded from
	Root       string // project root that relative paths resolve against
	Settings   Settings
	Mappings   []Mapping
	Validators map[string]*Validator // by name
	Order      []string              // the validators' names in file order
	Telemetry  Telemetry

	key    [sha256.Size]byte // SHA-256 of the text
	index  map[string][]int  // match's, by record kind and key
	cached *cached           // from the cache: records decoded as asked
}

// Settings is the [settings] table with defaults applied (docs/config.md):
// the keys as decoded, the three below typed over their text.
type Settings struct {
	rawSettings
	Timeout time.Duration
	Confine string // ConfineAuto, ConfineOn or ConfineOff
	Reuse   string // ReuseAuto, ReuseOn or ReuseOff
}

// Mapping arms Validators when the prompt Prompt is read or invoked.
type Mapping struct {
	Prompt      string   `toml:"prompt"` // a path without ".md" (see Names), or "plugin:name"
	Validators  []string `toml:"validators"`
	Line        int      `toml:"-"`
	WhenChanged []string `toml:"when_changed"` // its validators run only when a file these select changed since arming
}

// Validator is one named check: a built-in file check or a command.
type Validator struct {
	ValidatorKeys
	Name     string
	Timeout  time.Duration
	Line     int
	Judge    *Judge       // nil: not a judge
	patterns *pattern.Set // Inputs compiled, by the first Patterns
}

// Expects says what a file, diff or judge check asks; "" for a run one.
func (v *Validator) Expects() string {
	switch {
	case v.IsDiff():
		return v.Diff.wants()
	case v.Judge != nil:
		return fmt.Sprintf("%s judges: %s", v.Judge.Model, v.Judge.Rubric)
	case v.File == "":
		return ""
	}
	parts := []string{v.File + " must exist"}
	for _, want := range [][2]string{{"contain %q", v.Contains}, {"not contain %q", v.NotContains}, {"match %s", v.Regex}} {
		if want[1] != "" {
			parts = append(parts, fmt.Sprintf(want[0], want[1]))
		}
	}
	return strings.Join(parts, ", ")
}

// Command reports the dashed form of a prompt key, "/" replaced by "-".
func Command(key string) string { return strings.ReplaceAll(key, "/", "-") }

// Starter is the mappings.toml `gate init` writes.
//
//go:embed starter.toml
var Starter string

// Depth says how far Inspect looks beyond mappings.toml itself.
type Depth int

const (
	FileOnly Depth = iota // the file alone: the gate at every stop
	Project               // and the run programs and prompt files it names: gate check
)

// Inspect checks the config at file: the config as far as it reads, every problem by line, an error if unreadable.
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
	slices.SortStableFunc(ps, func(a, b *Problem) int { return cmp.Compare(a.Line, b.Line) })
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
