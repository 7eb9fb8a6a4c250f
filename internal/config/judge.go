package config

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/stopgate/stopgate/internal/cheats"
)

// Judge is a validator a model decides (judge = "RUBRIC") from evidence.
type Judge struct {
	Rubric   string
	Evidence []string // EvidenceChanged, "file:PATH" or "output:VALIDATOR"
	API      string   // APIAnthropic or APIOpenAI
	Endpoint string   // the URL requests are posted to
	Model    string
	KeyEnv   string // the NAME of the variable holding the key, never the key
	// OnFailureHalt or OnFailureBlock, when no verdict can be verified
	OnUnavailable string
	MaxBytes      int        // evidence_bytes: the evidence sent is cut to it
	Price         [2]float64 // price_per_mtok: USD per million tokens in, out
}

// The judge's API dialects, evidence kinds and defaults.
const (
	APIAnthropic        = "anthropic"
	APIOpenAI           = "openai"
	EvidenceChanged     = "changed" // the files changed since arming: diffs, or a new one's text
	DefaultEvidenceByte = 64 << 10
)

var (
	defaultEndpoint = map[string]string{APIAnthropic: "https://api.anthropic.com/v1/messages", APIOpenAI: "https://api.openai.com/v1/chat/completions"}
	defaultKeyEnv   = map[string]string{APIAnthropic: "ANTHROPIC_API_KEY", APIOpenAI: "OPENAI_API_KEY"}
)

// judge reads and checks a validator's judge keys; nil if it has none. A
// judge asked about nothing, of an unknown API, or with its key in the
// config would pass or leak.
func (p *parser) judge(key string, rv rawValidator, names map[string]rawValidator) *Judge {
	if rv.Judge == nil && rv.Evidence == nil && rv.API == "" && rv.Model == "" && rv.KeyEnv == nil && rv.Endpoint == "" {
		return nil
	}
	j := &Judge{Evidence: rv.Evidence, API: rv.API, Model: rv.Model, Endpoint: rv.Endpoint,
		OnUnavailable: OnFailureHalt, MaxBytes: DefaultEvidenceByte}
	if rv.Judge == nil || strings.TrimSpace(*rv.Judge) == "" {
		p.add(key+".judge", "needs the rubric", `judge = "The CHANGELOG entry describes the change." says what the model must check`)
	} else {
		j.Rubric = *rv.Judge
	}
	p.oneOf(key+".api", j.API, "an API", `use "anthropic" (the Messages API) or "openai" (chat completions, and servers compatible with it)`, APIAnthropic, APIOpenAI)
	if j.Model == "" {
		p.add(key+".model", "is missing", `model = "claude-sonnet-4-5" names the model the endpoint serves`)
	}
	j.Endpoint = cmp.Or(j.Endpoint, defaultEndpoint[j.API])
	if j.Endpoint != "" && !httpURL(j.Endpoint) {
		p.add(key+".endpoint", fmt.Sprintf("%q is not an http(s) URL", j.Endpoint), `the full URL posted to, like "https://api.anthropic.com/v1/messages"`)
	}
	j.KeyEnv = defaultKeyEnv[j.API]
	if rv.KeyEnv != nil {
		j.KeyEnv = *rv.KeyEnv
	}
	// A variable's name in capitals, which no API key is.
	if !envName().MatchString(j.KeyEnv) || strings.ToUpper(j.KeyEnv) != j.KeyEnv {
		p.add(key+".key_env", "must name the environment variable that holds the key, never the key itself",
			`key_env = "ANTHROPIC_API_KEY": the hooks' environment holds the key; mappings.toml is committed`)
	}
	if rv.OnUnavailable != "" {
		j.OnUnavailable = rv.OnUnavailable
	}
	p.oneOf(key+".on_unavailable", j.OnUnavailable, "a policy", `use "halt" (the default) or "block"`, OnFailureHalt, OnFailureBlock)
	if rv.EvidenceBytes != nil {
		j.MaxBytes = *rv.EvidenceBytes
		if j.MaxBytes < 1 {
			p.add(key+".evidence_bytes", fmt.Sprintf("%d must be at least 1", j.MaxBytes), "the most bytes of evidence sent to the model")
		}
	}
	if rv.Price != nil {
		if len(*rv.Price) != 2 || (*rv.Price)[0] < 0 || (*rv.Price)[1] < 0 {
			p.add(key+".price_per_mtok", "must be [input, output], in dollars per million tokens", "price_per_mtok = [3.0, 15.0]")
		} else {
			j.Price = [2]float64{(*rv.Price)[0], (*rv.Price)[1]}
		}
	}
	p.evidence(key+".evidence", j.Evidence, names)
	return j
}

// evidence checks what a judge may see.
func (p *parser) evidence(key string, ev []string, names map[string]rawValidator) {
	const hint = `evidence = ["changed", "file:CHANGELOG.md", "output:tests"]: the files changed since the prompt was armed, a file, a validator's output`
	if len(ev) == 0 {
		p.add(key, "is empty: the judge would see nothing", hint)
	}
	for _, e := range ev {
		kind, arg, _ := strings.Cut(e, ":")
		switch {
		case e == EvidenceChanged:
		case kind == "file" && outsidePath(arg) == "":
		case kind == "file":
			p.add(key, fmt.Sprintf("%q %s", e, outsidePath(arg)), hint)
		case kind == "output":
			if rv, ok := names[arg]; !ok || rv.Judge != nil {
				p.add(key, fmt.Sprintf("%q names no validator that is not a judge", e), "a judge may read the output of a file, run or diff validator, which runs first")
			}
		default:
			p.add(key, fmt.Sprintf("%q is not evidence a judge may see", e), hint)
		}
	}
}

// JudgeIn is whose text detect records when it arms a judge of "changed"
// evidence: the cheat checks' files and the prose rubrics are about.
var JudgeIn = append([]string{"*.md", "*.markdown", "*.rst", "*.txt", "*.adoc", "*.html", "*.css",
	"*.sql", "*.java", "*.kt", "*.rb", "*.rs", "*.c", "*.h", "*.cc", "*.cpp", "*.cs", "*.swift", "*.php"}, cheats.In...)
