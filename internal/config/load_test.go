package config

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stopgate/stopgate/internal/cli"
)

const example = `[settings]
timeout = "30s"
max_blocks = 2

[[mapping]]
prompt     = "joke"
validators = ["joke-file", "joke-short"]

[[mapping]]
prompt     = "git/worktrees/create"
validators = ["worktree"]

[validators.joke-file]
file = "output/joke.txt"
fix  = "Write the joke."

[validators.joke-short]
file         = "output/joke.txt"
regex        = "^.{1,280}$"
not_contains = "TODO"

[validators.worktree]
run     = "validators/validate-worktree.sh"
timeout = "10s"
`

func TestParseExample(t *testing.T) {
	cfg, err := Parse([]byte(example), "/p/mappings.toml", "/p")
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Settings
	if s.Timeout != 30*time.Second || s.MaxBlocks != 2 || s.PromptsDir != DefaultPromptsDir ||
		s.StateDir != DefaultStateDir || s.OutputLines != DefaultOutputLines || !s.Announce || s.OnFailure != OnFailureBlock || s.Protect != nil {
		t.Errorf("settings = %+v", s)
	}
	if got := strings.Join(cfg.Order, ","); got != "joke-file,joke-short,worktree" {
		t.Errorf("order = %s, want file order", got)
	}
	if v := cfg.Validators["joke-short"]; v.Timeout != 30*time.Second || compiles(v.Regex) == nil || v.Line != 17 {
		t.Errorf("joke-short = %+v", v)
	}
	if v := cfg.Validators["worktree"]; v.Timeout != 10*time.Second {
		t.Errorf("worktree timeout = %v", v.Timeout)
	}
	if m := cfg.Mappings[1]; m.Prompt != "git/worktrees/create" || m.Line != 9 {
		t.Errorf("mapping[1] = %+v", m)
	}
	if cfg.StateDir() != "/p/tmp/validation" || cfg.PromptPath("git/worktrees/create") != "/p/src/prompts/git/worktrees/create.md" {
		t.Errorf("paths: %s %s", cfg.StateDir(), cfg.PromptPath("git/worktrees/create"))
	}
}

// TestProblems pins every mistake the loader knows to its line and key.
func TestProblems(t *testing.T) {
	const base = "[[mapping]]\nprompt = \"p\"\nvalidators = [\"v\"]\n\n[validators.v]\nfile = \"x\"\n"
	tests := []struct {
		name, toml, want string
	}{
		{"syntax", "[[mapping]]\nprompt = \"p\n", `mappings.toml:2: `},
		{"unknown top-level", base + "[extra]\nx = 1\n", `mappings.toml:7: extra: unknown key`},
		{"unknown settings key", "[settings]\nstate = \"x\"\n" + base, `mappings.toml:2: settings.state: unknown key`},
		{"unknown mapping key", "[[mapping]]\nprompt = \"p\"\nvalidator = [\"v\"]\n", `mappings.toml:3: mapping.validator: unknown key`},
		{"unknown validator key", base + "fixx = \"y\"\n", `mappings.toml:7: validators.v.fixx: unknown key`},
		{"wrong type", "[settings]\nmax_blocks = \"3\"\n", `mappings.toml:2: settings.max_blocks: is a string, want an integer`},
		{"file and run", base + "run = \"true\"\n", `mappings.toml:5: validators.v: has both file and run`},
		{"neither", "[validators.v]\nfix = \"x\"\n", `mappings.toml:1: validators.v: needs file, run or a diff check`},
		{"cheats false", "[validators.v]\ncheats = false\n", `mappings.toml:2: validators.v.cheats: false checks nothing`},
		{"cheats and added_lacks", "[validators.v]\ncheats = true\nadded_lacks = \"x\"\nin = [\"*.go\"]\n", `mappings.toml:1: validators.v: has cheats and another diff check`},
		{"cheats and run", "[validators.v]\ncheats = true\nrun = \"true\"\n", `mappings.toml:1: validators.v: has a diff check`},
		{"cheats not a boolean", "[validators.v]\ncheats = \"yes\"\n", `mappings.toml:2: validators.v.cheats: is a string, want a boolean`},
		{"cheats bad in", "[validators.v]\ncheats = true\nin = [\"[a-\"]\n", `mappings.toml:3: validators.v.in: "[a-" is not a valid glob`},
		{"contains on run", "[validators.v]\nrun = \"true\"\ncontains = \"x\"\n", `mappings.toml:1: validators.v: contains, not_contains and regex apply to file validators only`},
		{"bad regex", "[validators.v]\nfile = \"x\"\nregex = \"(\"\n", `mappings.toml:3: validators.v.regex: does not compile: missing closing ): ` + "`(`"},
		{"bad duration", "[validators.v]\nfile = \"x\"\ntimeout = \"10\"\n", `mappings.toml:3: validators.v.timeout: "10" is not a positive duration`},
		{"bad settings duration", "[settings]\ntimeout = \"-1s\"\n", `mappings.toml:2: settings.timeout: "-1s" is not a positive duration`},
		{"undefined validator", "[[mapping]]\nprompt = \"a\"\nvalidators = [\"v\"]\n\n[[mapping]]\nprompt = \"b\"\nvalidators = [\"w\"]\n\n[validators.v]\nfile = \"x\"\n", `mappings.toml:7: mapping[1].validators: validator "w" is not defined`},
		{"duplicate prompt", base + "\n[[mapping]]\nprompt = \"p\"\nvalidators = [\"v\"]\n", `mappings.toml:9: mapping[1].prompt: prompt "p" is mapped twice (first on line 1)`},
		{"no validators", "[[mapping]]\nprompt = \"p\"\nvalidators = []\n", `mappings.toml:3: mapping[0].validators: no validators`},
		{"prompt with .md", "[[mapping]]\nprompt = \"p.md\"\nvalidators = [\"v\"]\n[validators.v]\nfile = \"x\"\n", `mappings.toml:2: mapping[0].prompt: prompt "p.md" ends in .md`},
		{"prompt escapes", "[[mapping]]\nprompt = \"../p\"\nvalidators = [\"v\"]\n[validators.v]\nfile = \"x\"\n", `mappings.toml:2: mapping[0].prompt: prompt "../p" is not a clean relative path`},
		{"prompt absolute", "[[mapping]]\nprompt = \"/p\"\nvalidators = [\"v\"]\n[validators.v]\nfile = \"x\"\n", `mappings.toml:2: mapping[0].prompt: prompt "/p" is not a clean relative path`},
		{"max_blocks zero", "[settings]\nmax_blocks = 0\n", `mappings.toml:2: settings.max_blocks: 0 is out of range 1..8`},
		{"max_blocks at client cap", "[settings]\nmax_blocks = 9\n", `mappings.toml:2: settings.max_blocks: 9 is out of range 1..8`},
		{"bad on_failure", "[settings]\non_failure = \"stop\"\n", `mappings.toml:2: settings.on_failure: "stop" is not a policy`},
		{"empty protect entry", "[settings]\nprotect = [\"docs\", \"\"]\n", `mappings.toml:2: settings.protect: entry 2 is empty`},
		{"empty prompts_dir", "[settings]\nprompts_dir = \"\"\n", `mappings.toml:2: settings.prompts_dir: must not be empty`},
		{"quoted keys", "[validators.\"my v\"]\nfile = \"x\"\n\"bad key\" = 1\n", `mappings.toml:3: validators."my v"."bad key": unknown key`},
		{"comment after header", "[validators.v] # the check\nfile = \"x\"\nfixx = 1\n", `mappings.toml:3: validators.v.fixx: unknown key`},
		{"multi-line string skipped", "[validators.v]\nfile = \"x\"\nfix = \"\"\"\nfixx = 1\n\"\"\"\nfixx = 2\n", `mappings.toml:6: validators.v.fixx: unknown key`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", "")
			_, err := Parse([]byte(tt.toml), "/p/mappings.toml", "/p")
			var ps Problems
			if !errors.As(err, &ps) || len(ps) == 0 {
				t.Fatalf("err = %v, want Problems", err)
			}
			if got := ps[0].Error(); !strings.HasPrefix(got, tt.want) {
				t.Errorf("got  %s\nwant %s…", got, tt.want)
			}
			var p *Problem
			if !errors.As(err, &p) || p.File != "mappings.toml" {
				t.Errorf("errors.As *Problem = %v", p)
			}
		})
	}
}

func TestBlockCapFromEnv(t *testing.T) {
	t.Setenv("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", "20")
	if _, err := Parse([]byte("[settings]\nmax_blocks = 12\n"), "m.toml", "/"); err != nil {
		t.Errorf("max_blocks 12 under a cap of 20: %v", err)
	}
}

// TestBlockCapDefaultUnchecked: only a max_blocks the user wrote is held
// to the cap; the default loads under any cap, as it always has.
func TestBlockCapDefaultUnchecked(t *testing.T) {
	t.Setenv("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", "2")
	if cfg, err := Parse([]byte("[settings]\nannounce = false\n"), "m.toml", "/"); err != nil || cfg.Settings.MaxBlocks != DefaultMaxBlocks {
		t.Errorf("no max_blocks under a cap of 2: %v", err)
	}
	if _, err := Parse([]byte("[settings]\nmax_blocks = 3\n"), "m.toml", "/"); err == nil {
		t.Error("max_blocks = 3 loaded under a cap of 2")
	}
}

func TestProtectEmptyVersusAbsent(t *testing.T) {
	cfg, err := Parse([]byte("[settings]\nprotect = []\n"), "m.toml", "/")
	if err != nil || cfg.Settings.Protect == nil || len(cfg.Settings.Protect) != 0 {
		t.Errorf("protect = [] gave %#v, %v; want an empty non-nil list", cfg.Settings.Protect, err)
	}
}

// TestProblemIsOneLine guards the one-line error contract against messages
// that quote control characters (the TOML decoder quotes a bad escape,
// newline and all).
func TestProblemIsOneLine(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                           "plain",
		"invalid escape in string '\\\n'": `invalid escape in string '\\n'`,
		"tab\there\x00":                   `tab\there\x00`,
		"ünïcode ✘":                       "ünïcode ✘",
	} {
		if got := cli.Visible(in, true); got != want {
			t.Errorf("cli.Visible(%q, true) = %q, want %q", in, got, want)
		}
	}
	_, err := Parse([]byte("\"\\\n"), "/p/mappings.toml", "/p")
	if err == nil || strings.ContainsAny(err.Error(), "\r\n") {
		t.Errorf("error is not one line: %q", err)
	}
}

func TestConfineSetting(t *testing.T) {
	for toml, want := range map[string]string{
		"":                              ConfineAuto,
		"[settings]\nconfine = true\n":  ConfineOn,
		"[settings]\nconfine = false\n": ConfineOff,
	} {
		cfg, err := Parse([]byte(toml), "m.toml", "/")
		if err != nil || cfg.Settings.Confine != want {
			t.Errorf("%q: confine %q, %v; want %q", toml, cfg.Settings.Confine, err, want)
		}
	}
	if _, err := Parse([]byte("[settings]\nconfine = \"yes\"\n"), "m.toml", "/"); err == nil {
		t.Errorf(`confine = "yes" loaded without a problem`)
	}
}

// compiles returns re compiled, or nil: what the validator engine will do
// with a regex the loader accepted.
func compiles(re string) *regexp.Regexp {
	r, _ := regexp.Compile(re)
	return r
}

// TestEmptyJudgeKeyIsNoJudge: an empty api, model or endpoint beside run
// leaves the validator a command, as a config written so always loaded; a
// model named makes it a judge, which then needs its rubric.
func TestEmptyJudgeKeyIsNoJudge(t *testing.T) {
	for _, extra := range []string{`model = ""`, `api = ""`, `endpoint = ""`} {
		text := "[[mapping]]\nprompt = \"p\"\nvalidators = [\"ok\"]\n\n[validators.ok]\nrun = \"true\"\n" + extra + "\n"
		cfg, err := Parse([]byte(text), "mappings.toml", t.TempDir())
		if err != nil {
			t.Errorf("%s: %v", extra, err)
			continue
		}
		if v := cfg.Validators["ok"]; v == nil || v.Judge != nil {
			t.Errorf("%s: validator %+v, want a command", extra, v)
		}
	}
	text := "[[mapping]]\nprompt = \"p\"\nvalidators = [\"ok\"]\n\n[validators.ok]\nrun = \"true\"\nmodel = \"m\"\n"
	if _, err := Parse([]byte(text), "mappings.toml", t.TempDir()); err == nil || !strings.Contains(err.Error(), "needs the rubric") {
		t.Errorf("a model named: %v, want a judge without its rubric", err)
	}
}
