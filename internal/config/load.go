package config

import (
	"cmp"
	"crypto/sha256"
	"fmt"
	"net/url"
	"os"
	"path"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/stopgate/stopgate/internal/cheats"
	"github.com/stopgate/stopgate/internal/pattern"
	"github.com/stopgate/stopgate/internal/project"
	"github.com/stopgate/stopgate/internal/validator"
)

// The raw shapes decoded from TOML: a pointer tells "absent" from "zero".
type rawFile struct {
	Settings   rawSettings              `toml:"settings"`
	Mapping    []Mapping                `toml:"mapping"`
	Validators map[string]ValidatorKeys `toml:"validators"`
	Telemetry  TelemetryKeys            `toml:"telemetry"`
}

type rawSettings struct {
	PromptsDir  string   `toml:"prompts_dir"`
	StateDir    string   `toml:"state_dir"`
	Timeout     string   `toml:"timeout" json:"timeout_text"` // the typed ones are Settings'
	MaxBlocks   int      `toml:"max_blocks"`
	OutputLines int      `toml:"output_lines"`
	Announce    bool     `toml:"announce"`
	OnFailure   string   `toml:"on_failure"`
	FailFast    bool     `toml:"fail_fast"`
	Mode        string   `toml:"mode"`    // ModeEnforce or ModeObserve
	Protect     []string `toml:"protect"` // nil: the default protection; empty: the guard off
	Confine     *bool    `toml:"confine" json:"confine_set"`
	Reuse       *bool    `toml:"reuse" json:"reuse_set"`
	OutputBytes int      `toml:"output_bytes"`
	Output      string   `toml:"output"`
}

var defaultSettings = rawSettings{
	PromptsDir: DefaultPromptsDir, StateDir: DefaultStateDir, Timeout: DefaultTimeout.String(),
	MaxBlocks: DefaultMaxBlocks, OutputLines: DefaultOutputLines, Announce: true,
	OnFailure: OnFailureBlock, Mode: ModeEnforce, OutputBytes: DefaultOutputBytes, Output: validator.OutputFailures,
}

// ValidatorKeys are a [validators.NAME] table's keys as decoded.
type ValidatorKeys struct {
	File        string     `toml:"file"` // built-in: this file must exist and meet the expectations
	Run         string     `toml:"run"`  // command run with sh -c from the project root
	Contains    string     `toml:"contains"`
	NotContains string     `toml:"not_contains"`
	Regex       string     `toml:"regex"`
	Timeout     string     `toml:"timeout"`
	Fix         string     `toml:"fix"`
	Inputs      []string   `toml:"inputs"`       // patterns of the files its verdict depends on; nil: the whole tree
	WhenChanged []string   `toml:"when_changed"` // it runs only when a file these select changed since arming
	Diff                   // its keys as they decode; "present" is p.has
	Judge       `json:"-"` // Validator.Judge holds it checked
	Price       *[]float64 `toml:"price_per_mtok" json:"-"`
}

// BlockCap is the blocked stops in a row Claude Code allows (CLAUDE_CODE_STOP_HOOK_BLOCK_CAP, else 9).
func BlockCap(getenv func(string) string) int {
	if n, err := strconv.Atoi(getenv("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP")); err == nil && n > 0 {
		return n
	}
	return 9
}

// Parse reads and checks config text read from file; mistakes are Problems.
func Parse(data []byte, file, root string) (*Config, error) {
	cfg, p := parse(data, file, root)
	if len(p.problems.Errors()) > 0 {
		return nil, p.problems
	}
	p.locate(cfg)
	return cfg, nil
}

// parse reads what it can, unlocated: nil when the TOML's syntax or types fail.
func parse(data []byte, file, root string) (*Config, *parser) {
	text := string(data)
	p := &parser{file: project.Display(root, file), pos: &positions{text: text}}
	raw := rawFile{Settings: defaultSettings, Telemetry: defaultTelemetry}
	md, err := toml.Decode(text, &raw)
	p.md = md
	notTable := notATable(md)
	if err != nil || notTable != nil {
		switch bad := p.typeCheck(text); {
		case bad != nil:
			p.problems = Problems{bad}
		case err != nil:
			p.problems = Problems{p.syntaxError(err)}
		default:
			// v.x = {} then v = "": the library keeps the table, silently.
			p.problems = Problems{{File: p.file, Line: p.pos.all().line(notTable.String()), Key: notTable.String(),
				Msg: "is defined both as a table and as a value", Hint: typeHint(notTable.String())}}
		}
		return nil, p
	}
	cfg := &Config{File: file, Root: root, Validators: make(map[string]*Validator, len(raw.Validators)), key: sha256.Sum256(data)}
	p.unknownKeys(md)
	p.settings(&cfg.Settings, raw.Settings, md)
	p.validators(cfg, md, raw.Validators)
	p.mappings(cfg, raw.Mapping)
	p.telemetry(&cfg.Telemetry, raw.Telemetry)
	return cfg, p
}

type parser struct {
	file     string // as shown to a person
	pos      *positions
	md       toml.MetaData
	problems Problems
}

// has reports whether validator name's table defines key.
func (p *parser) has(name, key string) bool { return p.md.IsDefined("validators", name, key) }

// locate sets the line of each mapping and validator.
func (p *parser) locate(cfg *Config) {
	for i := range cfg.Mappings {
		cfg.Mappings[i].Line = p.pos.all().line(mappingPath(i))
	}
	for _, v := range cfg.Validators {
		v.Line = p.pos.all().line("validators." + v.Name)
	}
}

func (p *parser) add(key, msg, hint string) { p.addAt(key, p.pos.all().line(key), msg, hint) }

func (p *parser) addIf(bad bool, key, msg, hint string) {
	if bad {
		p.add(key, msg, hint)
	}
}

func (p *parser) addAt(key string, line int, msg, hint string) {
	p.problems = append(p.problems, &Problem{File: p.file, Line: line, Key: key, Msg: msg, Hint: hint})
}

func (p *parser) settings(s *Settings, raw rawSettings, md toml.MetaData) {
	*s = Settings{rawSettings: raw, Confine: onOff(raw.Confine, ConfineOn, ConfineOff), Reuse: onOff(raw.Reuse, ReuseOn, ReuseOff)}
	p.addIf(raw.PromptsDir == "", "settings.prompts_dir", "must not be empty", `the default is "src/prompts"`)
	p.addIf(raw.StateDir == "", "settings.state_dir", "must not be empty", `the default is "tmp/validation"`)
	s.Timeout = p.duration("settings.timeout", raw.Timeout)
	v, cap := raw.MaxBlocks, BlockCap(os.Getenv)
	p.addIf(md.IsDefined("settings", "max_blocks") && (v < 1 || v >= cap), "settings.max_blocks", fmt.Sprintf("%d is out of range 1..%d", v, cap-1),
		fmt.Sprintf("Claude Code overrides a Stop hook after %d consecutive blocks; stay below (CLAUDE_CODE_STOP_HOOK_BLOCK_CAP raises that cap)", cap))
	p.addIf(raw.OutputLines < 1, "settings.output_lines", fmt.Sprintf("%d must be at least 1", raw.OutputLines), "")
	p.oneOf("settings.on_failure", raw.OnFailure, "a policy", `use "block" (send the agent back, halt after max_blocks) or "halt"`, OnFailureBlock, OnFailureHalt)
	p.oneOf("settings.mode", raw.Mode, "a mode", `use "enforce" (the default: block and halt) or "observe" (record and show what would be blocked; block nothing)`, ModeEnforce, ModeObserve)
	v = raw.OutputBytes
	p.addIf(v < minOutputBytes || v > maxOutputBytes, "settings.output_bytes", fmt.Sprintf("%d is out of range %d..%d", v, minOutputBytes, maxOutputBytes), "")
	p.oneOf("settings.output", raw.Output, "an output policy",
		`use "failures" (the failing tests first, then the output's end) or "head" (the output's first lines)`, validator.OutputFailures, validator.OutputHead)
	for i, path := range raw.Protect {
		p.addIf(strings.TrimSpace(path) == "", "settings.protect", fmt.Sprintf("entry %d is empty", i+1), "list paths relative to the project root; protect = [] turns the guard off")
	}
}

// oneOf adds a problem at key unless v is one of allowed.
func (p *parser) oneOf(key, v, what, hint string, allowed ...string) {
	p.addIf(!slices.Contains(allowed, v), key, fmt.Sprintf("%q is not %s", v, what), hint)
}

func (p *parser) duration(key, s string) time.Duration {
	d, err := time.ParseDuration(s)
	p.addIf(err != nil || d <= 0, key, fmt.Sprintf("%q is not a positive duration", s), `write it like "60s", "1m30s" or "500ms"`)
	if err != nil || d <= 0 {
		return DefaultTimeout
	}
	return d
}

func (p *parser) validators(cfg *Config, md toml.MetaData, raw map[string]ValidatorKeys) {
	for _, k := range md.Keys() {
		if len(k) < 2 || k[0] != "validators" {
			continue
		}
		name := k[1]
		rv, ok := raw[name]
		if _, seen := cfg.Validators[name]; seen || !ok {
			continue
		}
		key := "validators." + name
		v := &Validator{Name: name, ValidatorKeys: rv, Timeout: cfg.Settings.Timeout}
		diff := p.diff(name, &v.Diff, rv)
		v.Judge = p.judge(name, rv, raw)
		switch {
		case v.File == "" && v.Run == "" && !diff && v.Judge == nil:
			p.add(key, "needs file, run or a diff check", `file = "path" checks a file; run = "command" runs a program; changed, added_lacks, added_matches check what changed since the prompt was armed; cheats = true refuses the usual cheats; judge = "rubric" asks a model`)
		case v.Judge != nil && (diff || v.File != "" || v.Run != ""):
			p.add(key, "has judge and file, run or a diff check", "a validator is one kind: split it into two validators")
		case v.File != "" && v.Run != "":
			p.add(key, "has both file and run", "a validator is one or the other: split it into two validators")
		case diff && (v.File != "" || v.Run != ""):
			p.add(key, "has a diff check (changed, added_lacks, added_matches) and file or run", "a validator is one kind: split it into two validators")
		case v.Run != "" && (v.Contains != "" || v.NotContains != "" || v.Regex != ""):
			p.add(key, "contains, not_contains and regex apply to file validators only", "check the output inside the run program instead")
		}
		p.regex(key+".regex", v.Regex, "the syntax is Go's RE2")
		if rv.Timeout != "" {
			v.Timeout = p.duration(key+".timeout", rv.Timeout)
		}
		p.inputs(key, rv)
		p.whenChanged(key, rv.WhenChanged)
		cfg.Validators[name] = v
		cfg.Order = append(cfg.Order, name)
	}
}

func (p *parser) regex(key, re, hint string) {
	if _, err := syntax.Parse(re, syntax.Perl); err != nil {
		p.add(key, "does not compile: "+strings.TrimPrefix(err.Error(), "error parsing regexp: "), hint)
	}
}

func (p *parser) mappings(cfg *Config, raw []Mapping) {
	first := map[string]int{} // prompt → the mapping that maps it first
	for i, rm := range raw {
		key := mappingPath(i)
		if msg, hint := badPromptKey(rm.Prompt); msg != "" {
			p.add(key+".prompt", msg, hint)
		} else if j, dup := first[rm.Prompt]; dup {
			p.add(key+".prompt", fmt.Sprintf("prompt %q is mapped twice (first on line %d)", rm.Prompt, p.pos.all().line(mappingPath(j))), "list all its validators in one [[mapping]]")
		} else {
			first[rm.Prompt] = i
		}
		p.addIf(len(rm.Validators) == 0, key+".validators", "no validators", `validators = ["name", …] naming [validators.name] tables`)
		for _, name := range rm.Validators {
			if _, ok := cfg.Validators[name]; !ok {
				p.add(key+".validators", fmt.Sprintf("validator %q is not defined", name), fmt.Sprintf("add a [validators.%s] table", name))
			}
		}
		p.whenChanged(key, rm.WhenChanged)
	}
	cfg.Mappings = raw
}

func badPromptKey(k string) (msg, hint string) {
	switch {
	case k == "":
		return "missing prompt", `prompt = "key", the prompt file's path under prompts_dir without ".md"`
	case strings.HasSuffix(k, ".md"):
		return fmt.Sprintf("prompt %q ends in .md", k), fmt.Sprintf("write %q", strings.TrimSuffix(k, ".md"))
	case strings.HasPrefix(k, "/") || path.Clean(k) != k || k == "." || strings.HasPrefix(k, "../") || k == ".." || strings.Contains(k, "\\"):
		return fmt.Sprintf("prompt %q is not a clean relative path", k), `keys look like "joke" or "git/worktrees/create"`
	case IsPluginKey(k) && (strings.Contains(k, "/") || slices.Contains(strings.Split(k, ":"), "")):
		return fmt.Sprintf("prompt %q is neither a path nor a plugin command's name", k),
			`a plugin's command or skill is "plugin:name", as the client runs it (/plugin:name); .claude/commands/git/commit.md is "git/commit"`
	}
	return "", ""
}

func hintFor(k toml.Key) string {
	if len(k) > 0 && k[0] != "" {
		if keys, ok := fields()[k[0]]; ok {
			return "known keys here: " + strings.Join(keys, ", ")
		}
	}
	return "top-level tables are [settings], [[mapping]], [validators.NAME] and [telemetry]"
}

// whenChanged checks key's when_changed: selecting nothing skips the check.
func (p *parser) whenChanged(key string, globs []string) {
	if globs == nil {
		return
	}
	key += ".when_changed"
	const hint = `gitignore-style patterns of the files whose change runs the check: "*.go", "/go.mod", "src/**"`
	p.addIf(!slices.ContainsFunc(globs, func(g string) bool { return !strings.HasPrefix(g, "!") }), key, "selects nothing", hint)
	for _, g := range globs {
		if err := pattern.Check(g); err != nil {
			p.add(key, fmt.Sprintf("%q %v", g, err), hint)
		}
	}
}

func onOff(v *bool, on, off string) string {
	switch {
	case v == nil:
		return ""
	case *v:
		return on
	}
	return off
}

func (p *parser) inputs(key string, rv ValidatorKeys) {
	switch in := rv.Inputs; {
	case in == nil:
	case rv.File != "":
		p.add(key+".inputs", "applies to run validators only", "a file validator is always checked: it only reads its file")
	case len(in) == 0:
		p.add(key+".inputs", "lists no pattern", `remove it to take the whole working tree, or list the files the check reads: inputs = ["**/*.go", "go.mod"]`)
	default:
		if _, err := pattern.Compile(in); err != nil {
			p.add(key+".inputs", err.Error(), `gitignore-style patterns: "*.go" at any depth, "/go.mod" at the root, "src/**", "!*_test.go" to leave out`)
		}
	}
}

// Patterns returns v's inputs compiled, once; nil for the whole tree.
func (v *Validator) Patterns() (*pattern.Set, error) {
	if v.Inputs == nil || v.patterns != nil {
		return v.patterns, nil
	}
	ps, err := pattern.Compile(v.Inputs)
	if err != nil {
		return nil, fmt.Errorf("validators.%s.inputs: %w", v.Name, err)
	}
	v.patterns = ps
	return ps, nil
}

// Telemetry is the [telemetry] table (OTLP export of verdicts), its timeout typed.
type Telemetry struct {
	TelemetryKeys
	Timeout time.Duration
}

// TelemetryKeys are the [telemetry] table's keys as decoded.
type TelemetryKeys struct {
	Enabled    bool              `toml:"enabled"`
	Endpoint   string            `toml:"endpoint"`                    // a URL; "" is the SDK's default for the protocol
	Protocol   string            `toml:"protocol"`                    // TelemetryHTTP or TelemetryGRPC
	HeadersEnv string            `toml:"headers_env"`                 // the name of a variable holding headers, "k=v,k2=v2"
	Timeout    string            `toml:"timeout" json:"timeout_text"` // the typed one is Telemetry's
	Repository string            `toml:"repository"`                  // the vcs.repository.name; "" reads it from the project
	Resource   map[string]string `toml:"resource"`                    // more resource attributes
}

var defaultTelemetry = TelemetryKeys{Protocol: TelemetryHTTP, Timeout: DefaultTelemetryTimeout.String()}

var envName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

func (p *parser) telemetry(t *Telemetry, raw TelemetryKeys) {
	t.TelemetryKeys = raw
	p.addIf(p.md.IsDefined("telemetry", "endpoint") && !httpURL(raw.Endpoint), "telemetry.endpoint", fmt.Sprintf("%q is not an http or https URL", raw.Endpoint), `write it like "http://localhost:4318" (http/protobuf) or "http://localhost:4317" (grpc)`)
	p.oneOf("telemetry.protocol", raw.Protocol, "a protocol", `use "http/protobuf" (the default) or "grpc"`, TelemetryHTTP, TelemetryGRPC)
	p.addIf(p.md.IsDefined("telemetry", "headers_env") && !envName().MatchString(raw.HeadersEnv), "telemetry.headers_env",
		fmt.Sprintf("%q is not an environment variable's name", raw.HeadersEnv), `name the variable that holds the headers, e.g. "STOPGATE_OTLP_HEADERS"; never the headers themselves`)
	t.Timeout = p.duration("telemetry.timeout", raw.Timeout)
	p.addIf(t.Timeout > maxTelemetryTimeout, "telemetry.timeout", fmt.Sprintf("%q is longer than %s", raw.Timeout, maxTelemetryTimeout), "it is added to a stop whenever the collector is down or slow; the default is 2s")
	_, empty := raw.Resource[""]
	p.addIf(empty, "telemetry.resource", "an attribute has an empty name", "")
}

// Judge is a validator a model decides (judge = "RUBRIC") from evidence.
type Judge struct {
	Rubric        string     `toml:"judge"`
	Evidence      []string   `toml:"evidence"` // EvidenceChanged, "file:PATH" or "output:VALIDATOR"
	API           string     `toml:"api"`      // APIAnthropic or APIOpenAI
	Endpoint      string     `toml:"endpoint"` // the URL requests are posted to
	Model         string     `toml:"model"`
	KeyEnv        string     `toml:"key_env"`        // the NAME of the variable holding the key, never the key
	OnUnavailable string     `toml:"on_unavailable"` // OnFailureHalt or OnFailureBlock, when no verdict can be verified
	MaxBytes      int        `toml:"evidence_bytes"` // the evidence sent is cut to it
	Price         [2]float64 `toml:"-"`              // price_per_mtok: USD per million tokens in, out
}

var (
	defaultEndpoint = map[string]string{APIAnthropic: "https://api.anthropic.com/v1/messages", APIOpenAI: "https://api.openai.com/v1/chat/completions"}
	defaultKeyEnv   = map[string]string{APIAnthropic: "ANTHROPIC_API_KEY", APIOpenAI: "OPENAI_API_KEY"}
)

// judge reads and checks a validator's judge keys; nil if it has none. One
// asked about nothing, of an unknown API, or keyed in the config would pass or leak.
func (p *parser) judge(name string, rv ValidatorKeys, names map[string]ValidatorKeys) *Judge {
	key, j := "validators."+name, &rv.Judge
	// An empty api, model or endpoint is as good as none: only the others make a judge by being there.
	if !slices.ContainsFunc([]string{"judge", "evidence", "key_env"}, func(k string) bool { return p.has(name, k) }) && j.API+j.Model+j.Endpoint == "" {
		return nil
	}
	p.addIf(strings.TrimSpace(j.Rubric) == "", key+".judge", "needs the rubric", `judge = "The CHANGELOG entry describes the change." says what the model must check`)
	p.oneOf(key+".api", j.API, "an API", `use "anthropic" (the Messages API) or "openai" (chat completions, and servers compatible with it)`, APIAnthropic, APIOpenAI)
	p.addIf(j.Model == "", key+".model", "is missing", `model = "claude-sonnet-4-5" names the model the endpoint serves`)
	j.Endpoint = cmp.Or(j.Endpoint, defaultEndpoint[j.API])
	p.addIf(j.Endpoint != "" && !httpURL(j.Endpoint), key+".endpoint", fmt.Sprintf("%q is not an http(s) URL", j.Endpoint), `the full URL posted to, like "https://api.anthropic.com/v1/messages"`)
	if !p.has(name, "key_env") {
		j.KeyEnv = defaultKeyEnv[j.API]
	}
	// A variable's name in capitals, which no API key is.
	p.addIf(!envName().MatchString(j.KeyEnv) || strings.ToUpper(j.KeyEnv) != j.KeyEnv, key+".key_env", "must name the environment variable that holds the key, never the key itself",
		`key_env = "ANTHROPIC_API_KEY": the hooks' environment holds the key; mappings.toml is committed`)
	j.OnUnavailable = cmp.Or(j.OnUnavailable, OnFailureHalt)
	p.oneOf(key+".on_unavailable", j.OnUnavailable, "a policy", `use "halt" (the default) or "block"`, OnFailureHalt, OnFailureBlock)
	if !p.has(name, "evidence_bytes") {
		j.MaxBytes = DefaultEvidenceByte
	}
	p.addIf(j.MaxBytes < 1, key+".evidence_bytes", fmt.Sprintf("%d must be at least 1", j.MaxBytes), "the most bytes of evidence sent to the model")
	if price := rv.Price; price != nil {
		if len(*price) != 2 || (*price)[0] < 0 || (*price)[1] < 0 {
			p.add(key+".price_per_mtok", "must be [input, output], in dollars per million tokens", "price_per_mtok = [3.0, 15.0]")
		} else {
			j.Price = [2]float64(*price)
		}
	}
	p.evidence(key+".evidence", j.Evidence, names)
	return j
}

func (p *parser) evidence(key string, ev []string, names map[string]ValidatorKeys) {
	const hint = `evidence = ["changed", "file:CHANGELOG.md", "output:tests"]: the files changed since the prompt was armed, a file, a validator's output`
	p.addIf(len(ev) == 0, key, "is empty: the judge would see nothing", hint)
	for _, e := range ev {
		kind, arg, _ := strings.Cut(e, ":")
		switch {
		case e == EvidenceChanged:
		case kind == "file" && outsidePath(arg) == "":
		case kind == "file":
			p.add(key, fmt.Sprintf("%q %s", e, outsidePath(arg)), hint)
		case kind == "output":
			_, ok := names[arg]
			p.addIf(!ok || p.has(arg, "judge"), key, fmt.Sprintf("%q names no validator that is not a judge", e), "a judge may read the output of a file, run or diff validator, which runs first")
		default:
			p.add(key, fmt.Sprintf("%q is not evidence a judge may see", e), hint)
		}
	}
}

// JudgeIn are the files whose text detect records for a "changed" judge.
var JudgeIn = append([]string{"*.md", "*.markdown", "*.rst", "*.txt", "*.adoc", "*.html", "*.css",
	"*.sql", "*.java", "*.kt", "*.rb", "*.rs", "*.c", "*.h", "*.cc", "*.cpp", "*.cs", "*.swift", "*.php"}, cheats.In...)
