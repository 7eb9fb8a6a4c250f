package e2e

import (
	"bytes"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stopgate/stopgate/internal/example"
	"github.com/stopgate/stopgate/internal/schema"
	"github.com/stopgate/stopgate/internal/settings"
)

// Wrapper is the project file every stopgate command in a stopgate Project's bin/ links
// to: the program in internal/e2e/capture-then-exec, which saves the hook's stdin, then execs the
// real command (built from source, outside the project) on it. The client thus runs
// exactly the commands a user registers, and the test sees exactly what the client sent
// them.
//
// The client's hook durations include the wrapper: the capture can only make stopgate
// look slower than it is, never faster. BenchmarkWrapper measures what it adds.
const Wrapper = "bin/capture-then-exec"

// A Captured is one hook input the client sent, as a stopgate command received it.
type Captured struct {
	Program string // the command's name: "detect", "gate", ...
	Event   string // hook_event_name
	Tool    string // tool_name, for tool events
	AgentID string // agent_id: set inside a subagent
	Raw     []byte // the input, byte for byte
}

// Kind names the shape of an input for the stored examples: the event, the tool for tool
// events, and "subagent" for an input from inside a subagent other than SubagentStop.
func (c Captured) Kind() string {
	k := c.Event
	if c.Tool != "" {
		k += "." + c.Tool
	}
	if c.AgentID != "" && c.Event != "SubagentStop" {
		k += ".subagent"
	}
	return k
}

// capture installs the wrapper in p's bin/ for each command in real: bin/NAME becomes a
// link to the wrapper, which runs real/NAME.
func (p *Project) capture(real string, names []string) {
	p.t.Helper()
	p.captureDir = p.t.TempDir()
	if err := example.CopyTree(build.wrapper, p.Path(Wrapper)); err != nil {
		p.t.Fatalf("e2e: %v", err)
	}
	p.WriteFile(Wrapper+".conf", p.captureDir+"\n"+real+"\n")
	for _, name := range names {
		if err := os.Symlink(filepath.Base(Wrapper), p.Path("bin/"+name)); err != nil {
			p.t.Fatalf("e2e: %v", err)
		}
	}
}

// takeCaptured returns the inputs captured since the last call, oldest first, and
// removes them, so that each Result holds its own run's inputs.
func (p *Project) takeCaptured() ([]Captured, error) {
	if p.captureDir == "" {
		return nil, nil
	}
	des, err := os.ReadDir(p.captureDir)
	if err != nil {
		return nil, err
	}
	type file struct {
		c     Captured
		mtime int64
	}
	var files []file
	for _, de := range des {
		path := filepath.Join(p.captureDir, de.Name())
		info, err := de.Info()
		if err != nil {
			return nil, err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if err := os.Remove(path); err != nil {
			return nil, err
		}
		var head struct {
			Event   string `json:"hook_event_name"`
			Tool    string `json:"tool_name"`
			AgentID string `json:"agent_id"`
		}
		if err := json.Unmarshal(data, &head); err != nil {
			return nil, fmt.Errorf("captured input %s is not JSON: %w\n%s", de.Name(), err, data)
		}
		program, _, _ := strings.Cut(de.Name(), ".") // NAME.RANDOM.json
		files = append(files, file{Captured{program, head.Event, head.Tool, head.AgentID, data}, info.ModTime().UnixNano()})
	}
	slices.SortStableFunc(files, func(a, b file) int { return cmp.Compare(a.mtime, b.mtime) })
	out := make([]Captured, len(files))
	for i, f := range files {
		out[i] = f.c
	}
	return out, nil
}

// CheckInputs fails the test for each captured input that is not a valid input of its
// event by the SDK's types (internal/schema), and if the number of inputs captured for
// each event differs from the hook runs the debug log reports for that event's wrapped
// commands: every run must have been seen.
func (r *Result) CheckInputs() {
	r.t.Helper()
	for _, c := range r.Inputs {
		if err := schema.ValidateInput(c.Event, c.Raw); err != nil {
			r.Errorf("%s received an input the SDK types do not allow: %v\n%s", c.Program, err, c.Raw)
		}
	}
	captured := map[string]int{}
	for _, c := range r.Inputs {
		captured[c.Program+" "+c.Event]++
	}
	// A run the client cancelled may have ended before its input was captured.
	ran, cancelled := map[string]int{}, map[string]int{}
	for _, h := range r.HookRuns() {
		if prog := settings.Program(h.Command); r.wrapped[prog] {
			ran[prog+" "+h.Event]++
			if h.Cancelled {
				cancelled[prog+" "+h.Event]++
			}
		}
	}
	for k, n := range ran {
		if captured[k] > n || captured[k] < n-cancelled[k] {
			r.Errorf("%s ran %d times (%d cancelled) but %d inputs were captured", k, n, cancelled[k], captured[k])
		}
	}
	for k, n := range captured {
		if ran[k] == 0 {
			r.Errorf("%d inputs captured for %s, which the debug log never ran", n, k)
		}
	}
	if *update {
		storeCaptured(r.t, r)
		return
	}
	r.compareStored()
}

// compareStored fails the test for each input whose Shape differs from the stored
// example of its kind, or that has no stored example: a new client version that adds,
// drops or retypes a field shows here first, and -update records it for review.
func (r *Result) compareStored() {
	r.t.Helper()
	dir := filepath.Join(Root(r.t), filepath.FromSlash(capturedDir))
	for _, c := range r.Inputs {
		stored, err := os.ReadFile(filepath.Join(dir, c.Kind()+".json"))
		if err != nil {
			r.Errorf("no stored example of a %s input (%v): run the suite with -update and review %s", c.Kind(), err, capturedDir)
			continue
		}
		want, err := Shape(stored)
		if err != nil {
			r.Errorf("%s/%s.json: %v", capturedDir, c.Kind(), err)
			continue
		}
		got, err := Shape(c.Raw)
		if err != nil {
			r.Errorf("captured %s input: %v", c.Kind(), err)
			continue
		}
		if d := diff(want, got); d != "" {
			r.Errorf("the client's %s input differs from %s/%s.json (- stored, + now): %s\n%s\nIf the client was bumped on purpose, run the suite with -update and review the change.", c.Kind(), capturedDir, c.Kind(), d, c.Raw)
		}
	}
}

// Shape lists, sorted, the fields of a JSON object as "path: type" lines, nested
// objects included; arrays are not entered, and tool_input, which holds what the
// scripted model chose to send, is not either.
func Shape(doc []byte) ([]string, error) {
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("not a JSON object")
	}
	var out []string
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			path := prefix + k
			out = append(out, path+": "+jsonType(v))
			if sub, ok := v.(map[string]any); ok && path != "tool_input" {
				walk(path+".", sub)
			}
		}
	}
	walk("", m)
	slices.Sort(out)
	return out, nil
}

func jsonType(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	}
	return "null"
}

// diff lists the lines only in a ("-line") or only in b ("+line"), both sorted.
func diff(a, b []string) string {
	var d []string
	for _, l := range a {
		if _, found := slices.BinarySearch(b, l); !found {
			d = append(d, "-"+l)
		}
	}
	for _, l := range b {
		if _, found := slices.BinarySearch(a, l); !found {
			d = append(d, "+"+l)
		}
	}
	return strings.Join(d, ", ")
}

// Scrub replaces the run's temporary paths in a captured input with the placeholders
// the stored examples use: {{ROOT}} for the project, {{HOME}} for the client's home and
// {{PROJECT_KEY}} for the project's folder name under ~/.claude/projects.
func (r *Result) Scrub(raw []byte) []byte {
	pairs := []string{r.home, "{{HOME}}", r.dir, "{{ROOT}}"}
	if r.Transcript != "" {
		key := filepath.Base(filepath.Dir(r.Transcript))
		// The key must go first: it is the project path with "/" replaced, and
		// replacing {{ROOT}} inside it first would leave a broken key behind.
		pairs = append([]string{"/" + key + "/", "/{{PROJECT_KEY}}/"}, pairs...)
	}
	return []byte(strings.NewReplacer(pairs...).Replace(string(raw)))
}

// capturedDir is where the stored examples live, from the module root.
const capturedDir = "testdata/events/captured"

// storeCaptured writes one scrubbed example per input kind of r to testdata: the first
// of each kind in the suite's run, and only where there is none yet or its Shape
// differs, so that -update changes what changed and nothing else.
func storeCaptured(t testing.TB, r *Result) {
	t.Helper()
	dir := filepath.Join(Root(t), filepath.FromSlash(capturedDir))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("e2e: %v", err)
	}
	for _, c := range r.Inputs {
		k := c.Kind()
		if storedThisRun[k] {
			continue
		}
		storedThisRun[k] = true
		path := filepath.Join(dir, k+".json")
		if old, err := os.ReadFile(path); err == nil {
			was, err1 := Shape(old)
			now, err2 := Shape(c.Raw)
			if err1 == nil && err2 == nil && slices.Equal(was, now) {
				continue
			}
		}
		// Indented in the client's own key order.
		var buf bytes.Buffer
		if err := json.Indent(&buf, r.Scrub(c.Raw), "", "  "); err != nil {
			t.Fatalf("e2e: scrubbed input: %v", err)
		}
		buf.WriteByte('\n')
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatalf("e2e: %v", err)
		}
		t.Logf("stored %s/%s.json", capturedDir, k)
	}
}

// storedThisRun keeps -update from overwriting an example with a later scenario's.
var storedThisRun = map[string]bool{}

// update makes CheckInputs store the captured examples in testdata instead of comparing
// the run's inputs with them: go test ./internal/e2e -run . -update
var update = flag.Bool("update", false, "store one captured hook input per kind in "+capturedDir)
