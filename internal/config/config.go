// Package config loads mappings.toml: which prompt files arm which
// validators, and the settings of the gate.
//
// Decoding is strict: an unknown key, a wrong type, a validator that names
// both file and run, a regex that does not compile or a mapping that names an
// undefined validator is a Problem that names the file, the line and the key.
package config

import (
	"crypto/sha256"
	_ "embed" // the starter mappings.toml
	"fmt"
	"strings"
	"time"

	"github.com/stopgate/stopgate/internal/pattern"
	"github.com/stopgate/stopgate/internal/validator"
)

// Defaults for every [settings] key.
const (
	DefaultPromptsDir  = "src/prompts"
	DefaultStateDir    = "tmp/validation"
	DefaultTimeout     = validator.DefaultTimeout
	DefaultMaxBlocks   = 3
	DefaultOutputLines = 40
)

// Failure policies for [settings] on_failure.
const (
	OnFailureBlock = "block" // hand the failures to the agent, halt after max_blocks
	OnFailureHalt  = "halt"  // halt the session at the first failing stop
)

// Modes for [settings] mode.
const (
	ModeEnforce = "enforce" // block and halt as the checks say
	ModeObserve = "observe" // judge every stop, record and tell what would be blocked, block nothing
)

// Confinement policies for [settings] confine.
const (
	ConfineAuto = ""    // no confine key: confine where bubblewrap works
	ConfineOn   = "on"  // confine = true: a stop that cannot confine them halts
	ConfineOff  = "off" // confine = false: run validators as the gate runs
)

// Config is a loaded mappings.toml, parsed (Parse, Inspect) or read from
// the cache (Load). Detect and the gate ask it through its methods, whose
// errors are those of a cache that turns out unreadable after all.
type Config struct {
	File     string // path of the file it was loaded from
	Root     string // project root that relative paths resolve against
	Settings Settings
	Mappings []Mapping
	// Validators by name, and their names in file order: output follows the
	// order of mappings.toml, never completion order.
	Validators map[string]*Validator
	Order      []string
	Telemetry  Telemetry // [telemetry]: telemetry.go

	key   [sha256.Size]byte         // SHA-256 of the text
	index map[byte]map[string][]int // match's, by record kind
	// cached, for a config from the cache, holds the records of Mappings,
	// Validators, Order and Telemetry, each decoded when a question needs
	// it (see Full): most events need only the settings.
	cached *cached
}

// Settings is the [settings] table with defaults applied.
type Settings struct {
	PromptsDir  string
	StateDir    string
	Timeout     time.Duration
	MaxBlocks   int
	OutputLines int
	Announce    bool
	OnFailure   string
	// FailFast is [settings] fail_fast: a stop answers as soon as one
	// validator fails, stopping the others (file checks run first), instead
	// of waiting for the slowest.
	FailFast bool
	// Mode is ModeEnforce, or ModeObserve for a roll-out: failures are
	// recorded and shown to the user, and no stop is blocked.
	Mode string
	// Protect lists paths the PreToolUse guard keeps the agent from writing,
	// beyond the state dir, mappings.toml and run validators' paths. Nil
	// means the default protection; an empty list turns the guard off.
	Protect []string
	// Confine is [settings] confine: whether run validators execute with
	// the protected set mounted read-only (bubblewrap). ConfineAuto, the
	// default, confines them where bubblewrap works.
	Confine string
	// Reuse is [settings] reuse: whether a validator that passed earlier
	// in the session is taken as passed while nothing it depends on
	// changed (load.go).
	Reuse string
	// OutputBytes and Output are [settings] output_bytes and output: the
	// bytes of a validator's output kept, and what is kept and shown
	// first past them and past OutputLines (load.go).
	OutputBytes int
	Output      string
}

// Mapping arms Validators when the prompt Prompt is read or invoked.
type Mapping struct {
	Prompt     string // key: a path without ".md" (see Names), or "plugin:name"
	Validators []string
	Line       int
	// WhenChanged: its validators run only when a file it selects
	// changed since the prompt was armed (load.go).
	WhenChanged []string
}

// Validator is one named check: a built-in file check or a command.
type Validator struct {
	Name        string
	File        string // built-in: this file must exist and meet the expectations
	Run         string // command run with sh -c from the project root
	Contains    string
	NotContains string
	Regex       string
	Timeout     time.Duration
	Fix         string
	Line        int
	Diff               // changed, added_lacks, added_matches, in: diff.go
	Judge       *Judge // judge and its keys (judge.go); nil: not a judge
	// Inputs are the gitignore-style patterns of the files its verdict
	// depends on (load.go); nil: the whole working tree.
	Inputs []string
	// WhenChanged: it runs only when a file it selects changed since its
	// prompt was armed (load.go).
	WhenChanged []string

	patterns *pattern.Set // Inputs compiled, by the first Patterns
}

// Expects says in one line what a file or diff check asks of the work,
// as the announcement says it (when the validator has no fix) and the
// outcome log and telemetry record it: `output/joke.txt must exist,
// contain "x"`, `CHANGELOG.md must change (since this prompt was read)`.
// "" for a run validator.
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
	if v.Contains != "" {
		parts = append(parts, fmt.Sprintf("contain %q", v.Contains))
	}
	if v.NotContains != "" {
		parts = append(parts, fmt.Sprintf("not contain %q", v.NotContains))
	}
	if v.Regex != "" {
		parts = append(parts, "match "+v.Regex)
	}
	return strings.Join(parts, ", ")
}

// Command reports the dashed form of a prompt key, "/" replaced by "-": the
// flat command's name and its file name under .claude/commands (see Names).
func Command(key string) string { return strings.ReplaceAll(key, "/", "-") }

// Starter is the mappings.toml `gate init` writes into a project that has
// none: every setting at its default, explained, and a commented example
// of a mapping and of both kinds of validator to copy from.
//
//go:embed starter.toml
var Starter string
