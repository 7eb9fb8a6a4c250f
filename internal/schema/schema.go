// Package schema holds JSON Schemas (draft 2020-12) for the JSON that Claude
// Code hooks read and write, for the hook events stopgate handles, and checks
// documents against them.
//
// The schemas are written from the TypeScript types of the npm package
// @anthropic-ai/claude-agent-sdk (file sdk.d.ts, SyncHookJSONOutput and the
// *HookSpecificOutput and *HookInput types); each file's $comment names the
// exact package version and types. An output schema is closed: the real
// client silently ignores a key it does not know, so a misspelled or legacy
// key (such as {"replace": ...}) would make a hook do nothing without any
// error, and only a closed schema catches that. An input schema is open,
// because the client adds fields over time.
//
// This package is for tests and for offline checks. Hook binaries must not
// call it on their hot path: compiling the schemas costs far more than a
// hook's whole run.
package schema

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

//go:embed *.json
var files embed.FS

// Schema file names are "<Event>.output.schema.json" and
// "<Event>.input.schema.json".
const (
	outputSuffix = ".output.schema.json"
	inputSuffix  = ".input.schema.json"
)

var (
	compileOnce sync.Once
	outputs     map[string]*jsonschema.Schema // by event name
	inputs      map[string]*jsonschema.Schema // by event name
	compileErr  error
)

// compile compiles every embedded schema, once per process.
func compile() error {
	compileOnce.Do(func() {
		outputs, inputs, compileErr = compileAll()
	})
	return compileErr
}

func compileAll() (out, in map[string]*jsonschema.Schema, err error) {
	names, err := fs.Glob(files, "*.json")
	if err != nil {
		return nil, nil, err
	}
	out = make(map[string]*jsonschema.Schema)
	in = make(map[string]*jsonschema.Schema)
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	for _, name := range names {
		var event string
		var dst map[string]*jsonschema.Schema
		switch {
		case strings.HasSuffix(name, outputSuffix):
			event, dst = strings.TrimSuffix(name, outputSuffix), out
		case strings.HasSuffix(name, inputSuffix):
			event, dst = strings.TrimSuffix(name, inputSuffix), in
		default:
			return nil, nil, fmt.Errorf("schema file %s: name is not <Event>%s or <Event>%s", name, outputSuffix, inputSuffix)
		}
		data, err := files.ReadFile(name)
		if err != nil {
			return nil, nil, err
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			return nil, nil, fmt.Errorf("schema file %s: %w", name, err)
		}
		// The URL only names the resource inside this compiler: nothing is
		// ever loaded from it.
		url := "urn:stopgate:schema:" + name
		if err := c.AddResource(url, doc); err != nil {
			return nil, nil, fmt.Errorf("schema file %s: %w", name, err)
		}
		sch, err := c.Compile(url)
		if err != nil {
			return nil, nil, fmt.Errorf("schema file %s: %w", name, err)
		}
		dst[event] = sch
	}
	return out, in, nil
}

// Events returns, sorted, the names of the hook events that have an output
// schema. Every one of them has an input schema too.
func Events() []string {
	if err := compile(); err != nil {
		return nil
	}
	var events []string
	for e := range outputs {
		events = append(events, e)
	}
	slices.Sort(events)
	return events
}

// ValidateOutput reports whether out, what a hook printed on stdout for the
// hook event named event (such as "Stop" or "PreToolUse"), is an output the
// client accepts for that event.
//
// Empty or whitespace-only output is valid: the client takes it as "no
// opinion". Anything else must be exactly one JSON object valid against the
// event's output schema. An event without a schema, such as the legacy names
// "PreToolCall" and "PostToolCall", is an error whatever out holds.
//
// A schema violation is reported as an *Error.
func ValidateOutput(event string, out []byte) error {
	if err := compile(); err != nil {
		return err
	}
	sch, ok := outputs[event]
	if !ok {
		return unknownEvent(event)
	}
	if len(bytes.TrimSpace(out)) == 0 {
		return nil
	}
	return validate(sch, event, "output", out)
}

// ValidateInput reports whether in, the JSON a hook read on stdin, is an
// input of the hook event named event with every field stopgate relies on,
// of the right type. Unlike output, empty input is invalid. Fields the schema
// does not name are allowed.
//
// A schema violation is reported as an *Error.
func ValidateInput(event string, in []byte) error {
	if err := compile(); err != nil {
		return err
	}
	sch, ok := inputs[event]
	if !ok {
		return unknownEvent(event)
	}
	if len(bytes.TrimSpace(in)) == 0 {
		return &Error{Event: event, What: "input", Reason: "empty input", Err: errEmpty}
	}
	return validate(sch, event, "input", in)
}

var errEmpty = errors.New("empty document")

func unknownEvent(event string) error {
	return fmt.Errorf("unknown hook event %q (known: %s)", event, strings.Join(Events(), ", "))
}

func validate(sch *jsonschema.Schema, event, what string, data []byte) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return &Error{Event: event, What: what, Reason: "not one JSON value: " + err.Error(), Err: err}
	}
	err = sch.Validate(doc)
	var verr *jsonschema.ValidationError
	if err == nil {
		return nil
	} else if !errors.As(err, &verr) {
		return fmt.Errorf("invalid %s hook %s: %w", event, what, err)
	}
	ls := leaves(verr, nil)
	slices.SortFunc(ls, func(a, b leaf) int { return strings.Compare(a.pointer, b.pointer) })
	e := &Error{Event: event, What: what, Pointer: ls[0].pointer, Reason: ls[0].reason, Err: verr}
	for _, l := range ls[1:] {
		e.more = append(e.more, fmt.Sprintf("at %q: %s", l.pointer, l.reason))
	}
	return e
}

// An Error reports a hook's JSON that does not match its event's schema.
type Error struct {
	Event   string // hook event name, such as "Stop"
	What    string // "output" or "input"
	Pointer string // JSON Pointer (RFC 6901) of the first failing value; "" is the whole document
	Reason  string // why that value fails
	Err     error  // the *jsonschema.ValidationError or the JSON syntax error

	more []string // further failures, already formatted
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("invalid %s hook %s at %q: %s", e.Event, e.What, e.Pointer, e.Reason)
	if len(e.more) > 0 {
		msg += "; " + strings.Join(e.more, "; ")
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

type leaf struct {
	pointer, reason string
}

// leaves flattens a validation error tree into its innermost failures,
// pointing at the offending key itself rather than at the object holding it
// where the keyword is about keys (additionalProperties, required).
func leaves(e *jsonschema.ValidationError, ls []leaf) []leaf {
	if len(e.Causes) > 0 {
		for _, c := range e.Causes {
			ls = leaves(c, ls)
		}
		return ls
	}
	at := pointer(e.InstanceLocation)
	switch k := e.ErrorKind.(type) {
	case *kind.AdditionalProperties:
		for _, p := range k.Properties {
			ls = append(ls, leaf{at + "/" + escape(p), "unknown property (the client would ignore it)"})
		}
	case *kind.Required:
		for _, p := range k.Missing {
			ls = append(ls, leaf{at + "/" + escape(p), "missing required property"})
		}
	default:
		ls = append(ls, leaf{at, message(e)})
	}
	return ls
}

// message is the library's English text for a leaf error, taken through
// BasicOutput so that this package needs no direct golang.org/x/text import.
func message(e *jsonschema.ValidationError) string {
	out := (&jsonschema.ValidationError{
		SchemaURL:        e.SchemaURL,
		InstanceLocation: e.InstanceLocation,
		ErrorKind:        e.ErrorKind,
	}).BasicOutput()
	if out.Error == nil {
		return "validation failed"
	}
	return out.Error.String()
}

func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(escape(t))
	}
	return b.String()
}

// escape escapes a JSON Pointer reference token (RFC 6901, section 3).
func escape(token string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(token)
}
