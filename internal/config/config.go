// Package config loads mappings.toml strictly: every mistake is a Problem
// naming the file, the line and the key.
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

// Settings is the [settings] table with defaults applied (docs/config.md).
type Settings struct {
	PromptsDir  string
	StateDir    string
	Timeout     time.Duration
	MaxBlocks   int
	OutputLines int
	Announce    bool
	OnFailure   string
	FailFast    bool
	Mode        string   // ModeEnforce or ModeObserve
	Protect     []string // nil: the default protection; empty: the guard off
	Confine     string   // ConfineAuto, ConfineOn or ConfineOff
	Reuse       string   // ReuseAuto, ReuseOn or ReuseOff
	OutputBytes int
	Output      string
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
	Name        string
	File        string // built-in: this file must exist and meet the expectations
	Run         string // command run with sh -c from the project root
	Contains    string
	NotContains string
	Regex       string
	Timeout     time.Duration
	Fix         string
	Line        int
	Diff
	Judge       *Judge   // nil: not a judge
	Inputs      []string // patterns of the files its verdict depends on; nil: the whole tree
	WhenChanged []string // it runs only when a file these select changed since arming

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
